package trustset

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// pool is a few CAs and one leaf, made once: key generation is slow.
var pool = sync.OnceValues(func() ([]string, string) {
	cas := make([]string, 0, 6)
	var leaf string
	for i := range 6 {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 1)), Subject: pkix.Name{CommonName: "ca"},
			NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			panic(err)
		}
		cas = append(cas, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
		if i == 0 {
			l := &x509.Certificate{SerialNumber: big.NewInt(99), Subject: pkix.Name{CommonName: "leaf"},
				NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0)}
			lder, err := x509.CreateCertificate(rand.Reader, l, tmpl, &key.PublicKey, key)
			if err != nil {
				panic(err)
			}
			leaf = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: lder}))
		}
	}
	return cas, leaf
})

// fataler is what mustCA needs of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func mustCA(t fataler, p string) CA {
	t.Helper()
	ca, err := NewCA(p)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func TestNewCA(t *testing.T) {
	cas, leaf := pool()
	for name, tc := range map[string]struct {
		pem     string
		wantErr string
	}{
		"CA":          {cas[0], ""},
		"CAWithSpace": {"\n  " + cas[0] + "\n\n", ""},
		"Leaf":        {leaf, "not a CA"},
		"NotPEM":      {"hello", "not PEM"},
		"Key":         {string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("k")})), "not a CERTIFICATE"},
		"Junk":        {string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")})), "not a certificate"},
		"TwoBlocks":   {cas[0] + cas[1], "more than one PEM block"},
		"Empty":       {"", "not PEM"},
	} {
		t.Run(name, func(t *testing.T) {
			ca, err := NewCA(tc.pem)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("NewCA() error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ca.PEM != strings.TrimSpace(cas[0]) || len(ca.Fingerprint) != 64 {
				t.Errorf("NewCA() = %+v, want the trimmed PEM and a SHA-256 hex fingerprint", ca)
			}
		})
	}
	if a, b := mustCA(t, cas[0]), mustCA(t, "\n"+cas[0]); a != b {
		t.Error("the same CA with different white space has two fingerprints")
	}
}

func TestBundle(t *testing.T) {
	cas, _ := pool()
	a, b, c := mustCA(t, cas[0]), mustCA(t, cas[1]), mustCA(t, cas[2])
	data, fps := Bundle(map[string][]CA{"e1": {a, b}, "e2": {b, c}, "e3": nil})
	want := []string{a.Fingerprint, b.Fingerprint, c.Fingerprint}
	slices.Sort(want)
	if !slices.Equal(fps, want) {
		t.Errorf("fingerprints %v, want %v", fps, want)
	}
	got := readBundle(t, data)
	if len(got) != 3 || !strings.HasSuffix(data, "\n") {
		t.Errorf("bundle holds %d CAs (want 3, each once) and ends %q", len(got), data[len(data)-1:])
	}
	if data2, _ := Bundle(map[string][]CA{"e2": {c, b}, "e1": {b, a}}); data2 != data {
		t.Error("the same CAs in another order give another bundle")
	}
	if data, fps := Bundle(nil); data != "" || fps != nil {
		t.Errorf("Bundle(nil) = %q, %v", data, fps)
	}
}

// readBundle reads a bundle back as the CAs it holds, each checked to be
// one.
func readBundle(t *testing.T, data string) []CA {
	t.Helper()
	return readBundleOf(t, data)
}

// readBundleOf is readBundle for a *testing.T or a *rapid.T.
func readBundleOf(t fataler, data string) []CA {
	var out []CA
	rest := []byte(data)
	for {
		block, next := pem.Decode(rest)
		if block == nil {
			if strings.TrimSpace(string(rest)) != "" {
				t.Fatalf("bundle holds text that is not PEM: %q", string(rest))
			}
			return out
		}
		out = append(out, mustCA(t, string(pem.EncodeToMemory(block))))
		rest = next
	}
}

// TestBundleOfAnySources: whatever sources hold which CAs, in whatever
// order and with repeats, the bundle holds each distinct CA once, in
// fingerprint order, and lists exactly their fingerprints.
func TestBundleOfAnySources(t *testing.T) {
	cas, _ := pool()
	rapid.Check(t, func(t *rapid.T) {
		sources := map[string][]CA{}
		want := map[string]CA{}
		for i := range rapid.IntRange(0, 4).Draw(t, "sources") {
			for _, j := range rapid.SliceOfN(rapid.IntRange(0, len(cas)-1), 0, 4).Draw(t, "cas") {
				ca := mustCA(t, cas[j])
				sources[string(rune('a'+i))] = append(sources[string(rune('a'+i))], ca)
				want[ca.Fingerprint] = ca
			}
		}
		data, fps := Bundle(sources)
		wantFPs := slices.Sorted(func(yield func(string) bool) {
			for fp := range want {
				if !yield(fp) {
					return
				}
			}
		})
		if len(want) == 0 {
			if data != "" || fps != nil {
				t.Fatalf("Bundle of no CA = %q, %v", data, fps)
			}
			return
		}
		if !slices.Equal(fps, wantFPs) {
			t.Fatalf("fingerprints %v, want %v", fps, wantFPs)
		}
		var got []string
		for _, ca := range readBundleOf(t, data) {
			got = append(got, ca.Fingerprint)
		}
		if d := cmp.Diff(wantFPs, got); d != "" {
			t.Fatalf("bundle holds (-want +got):\n%s", d)
		}
	})
}
