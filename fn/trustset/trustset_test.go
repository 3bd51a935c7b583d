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
	"github.com/google/go-cmp/cmp/cmpopts"
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

// TestEncodeDecode: what an engine publishes reads back as the distinct
// CAs it was given, in one order, whatever their order and repeats.
func TestEncodeDecode(t *testing.T) {
	cas, _ := pool()
	rapid.Check(t, func(t *rapid.T) {
		idx := rapid.SliceOfN(rapid.IntRange(0, len(cas)-1), 0, 6).Draw(t, "cas")
		in := make([]CA, 0, len(idx))
		for _, i := range idx {
			in = append(in, mustCA(t, cas[i]))
		}
		want := distinct(in)
		got, err := Decode(Encode(in))
		if len(want) > MaxCAsPerEngine {
			if err == nil {
				t.Fatalf("Decode accepted %d CAs, more than %d", len(want), MaxCAsPerEngine)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("Decode(Encode()) (-want +got):\n%s", d)
		}
		if Encode(in) != Encode(got) {
			t.Fatal("encoding is not canonical")
		}
	})
}

func TestDecodeRefuses(t *testing.T) {
	cas, leaf := pool()
	for name, tc := range map[string]struct {
		published string
		want      string
	}{
		"TooBig":      {strings.Repeat("A", MaxEngineBytes+1), "more than"},
		"TooMany":     {cas[0] + cas[1] + cas[2] + cas[3], "more than 3 CAs"},
		"Leaf":        {cas[0] + leaf, "CA 2: a certificate that is not a CA"},
		"TextBetween": {cas[0] + "hello\n", "not PEM"},
		"NotPEM":      {"hello", "not PEM"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Decode(tc.published)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Decode() = %v, %v; want an error saying %q", got, err, tc.want)
			}
			if got != nil {
				t.Errorf("Decode() returned %v beside its error", got)
			}
		})
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
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
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

func TestReplace(t *testing.T) {
	for name, tc := range map[string]struct {
		complete     bool
		served, next []string
		want         bool
	}{
		"CompleteReadMayDrop":   {true, []string{"a", "b"}, []string{"b"}, true},
		"NothingServed":         {false, nil, []string{"a"}, true},
		"PartialReadKeepsAll":   {false, []string{"a", "b"}, []string{"a", "b", "c"}, true},
		"PartialReadDrops":      {false, []string{"a", "b"}, []string{"a", "c"}, false},
		"PartialReadEmptiesAll": {false, []string{"a"}, nil, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := Replace(tc.complete, tc.served, tc.next); got != tc.want {
				t.Errorf("Replace() = %v, want %v", got, tc.want)
			}
		})
	}
}
