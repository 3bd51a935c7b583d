package envoyconfig

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.yaml from Config")

// goldenParams are instances whose envoy.yaml is kept in testdata, byte for
// byte: the bytes are what the config-hash annotation hashes, so any change
// to them rolls every gateway and must be deliberate.
var goldenParams = map[string]Params{
	"defaults":              {Namespace: "analytics"},
	"custom-metrics-port":   {Namespace: "team-a", MetricsPort: 9191},
	"custom-cluster-domain": {Namespace: "analytics", ClusterDomain: "corp.example", MetricsPort: 9090},
	"wake-agent":            {Namespace: "analytics", WakeAgent: true},
	"tls":                   {Namespace: "analytics", Listener: Listener{TLS: true}},
	"mutual-tls-crl":        {Namespace: "analytics", WakeAgent: true, Listener: Listener{TLS: true, ClientCA: true, CRL: true}},
	"closed":                {Namespace: "analytics", WakeAgent: true, Listener: Listener{Closed: true}},

	// Upstream TLS: engines over TLS by default; plain by default with one
	// engine switching to TLS through its next Service; TLS with a CRL,
	// behind mutual TLS, one engine switching back to plain and another
	// reached over plain HTTP at its own Service.
	"upstream-tls":             {Namespace: "analytics", Upstream: Upstream{TLS: true}},
	"upstream-plain-tls-route": {Namespace: "analytics", Upstream: Upstream{Routes: []EngineRoute{{Engine: "sales", Service: "sales-next", TLS: true}}}},
	"upstream-tls-crl": {Namespace: "analytics", WakeAgent: true, Listener: Listener{TLS: true, ClientCA: true, CRL: true},
		Upstream: Upstream{TLS: true, CRL: true, Routes: []EngineRoute{
			{Engine: "finance", Service: "finance-service"},
			{Engine: "sales", Service: "sales-next"},
		}}},
}

func TestConfigGolden(t *testing.T) {
	for name, p := range goldenParams {
		t.Run(name, func(t *testing.T) {
			got, err := Config(p)
			if err != nil {
				t.Fatalf("Config(%+v): %v", p, err)
			}
			path := filepath.Join("testdata", name+".yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("Config(%+v): -%s +got:\n%s", p, path, diff)
			}
		})
	}
}
