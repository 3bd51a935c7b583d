package scale

import (
	"strings"
	"testing"
)

func TestCPUSeconds(t *testing.T) {
	// Fields 14 and 15 (utime, stime) are 1234 and 566 ticks: 18 s.
	rest := " S 1 1 1 0 -1 4194560 100 0 0 0 1234 566 0 0 20 0 12 0 100 1000000 2000 18446744073709551615"
	cases := map[string]struct {
		stat    string
		want    float64
		wantErr string
	}{
		"Plain":                 {stat: "42 (kube-apiserver)" + rest, want: 18},
		"NameWithSpaceAndParen": {stat: "42 (a) b (c)" + rest, want: 18},
		"NoName":                {stat: "42 kube-apiserver S 1", wantErr: "no command name"},
		"Short":                 {stat: "42 (etcd) S 1 1", wantErr: "fields after the command name"},
		"NotANumber":            {stat: "42 (etcd) S 1 1 1 0 -1 4194560 100 0 0 0 x 566 0", wantErr: "field 14"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := CPUSeconds([]byte(tc.stat))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("CPUSeconds: want error containing %q, got %v (%g)", tc.wantErr, err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("CPUSeconds: want %g, got %g", tc.want, got)
			}
		})
	}
}

func TestPeakRSSBytes(t *testing.T) {
	cases := map[string]struct {
		status  string
		want    int64
		wantErr string
	}{
		"Found":     {status: "Name:\tfunction\nVmPeak:\t  900000 kB\nVmHWM:\t   61440 kB\nVmRSS:\t   50000 kB\n", want: 61440 * 1024},
		"Missing":   {status: "Name:\tfunction\nVmRSS:\t 50000 kB\n", wantErr: "no VmHWM"},
		"OtherUnit": {status: "VmHWM:\t 60 MB\n", wantErr: "want <number> kB"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := PeakRSSBytes([]byte(tc.status))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("PeakRSSBytes: want error containing %q, got %v (%d)", tc.wantErr, err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("PeakRSSBytes: want %d, got %d", tc.want, got)
			}
		})
	}
}
