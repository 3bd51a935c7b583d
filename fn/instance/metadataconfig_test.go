package instance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestRenderMetadataConfig(t *testing.T) {
	internal := postgresTarget{Host: "demo-metadata-pg.firebolt.svc.cluster.local", Port: 5432, Database: "firebolt_metadata", Schema: "public"}
	cases := map[string]struct {
		reason string
		id     string
		pg     postgresTarget
		ng     bool
		want   string
	}{
		"Legacy": {
			reason: "The legacy service gets the account id, schema and its tuning keys.",
			id:     "01KP98J0000000000000000000",
			pg:     internal,
			want: `pensieve_lite:
  default_account_id: 01KP98J0000000000000000000
  host: 0.0.0.0
  log_level: information
  metadata_storage:
    garbage_collection:
      enabled: true
      interval_ms: 3600000
      time_horizon_sec: 86400
    postgresql:
      connect_timeout_sec: 5
      database: firebolt_metadata
      host: demo-metadata-pg.firebolt.svc.cluster.local
      keepalive:
        count: 5
        enabled: 1
        idle_sec: 120
        interval_sec: 30
      port: 5432
      schema: public
  port: 7000
  server_threads: 0
`,
		},
		"MetadataNG": {
			reason: "metadata-ng gets the account id, the listener and the database endpoint with its schema, as the original renders them in both modes; no legacy tuning.",
			id:     "01KP98J0000000000000000000",
			pg:     postgresTarget{Host: "pg.example.com", Port: 6432, Database: "fb", Schema: "custom"},
			ng:     true,
			want: `pensieve_lite:
  default_account_id: 01KP98J0000000000000000000
  host: 0.0.0.0
  metadata_storage:
    postgresql:
      database: fb
      host: pg.example.com
      port: 6432
      schema: custom
  port: 7000
`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := renderMetadataConfig(tc.id, tc.pg, tc.ng)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nrenderMetadataConfig(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRenderMetadataConfigQuotesUserStrings feeds strings the schema would
// refuse (as if its patterns were bypassed) and checks each comes back as
// exactly one value, with no key added anywhere.
func TestRenderMetadataConfigQuotesUserStrings(t *testing.T) {
	pg := postgresTarget{
		Host:     "evil\ninjected: pwned\nhost: attacker.example",
		Port:     5432,
		Database: `db: "name"`,
		Schema:   "s'chema\"\n  - item",
	}
	id := "acc<1>: {x: y}"
	for _, ng := range []bool{false, true} {
		got, err := renderMetadataConfig(id, pg, ng)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(got), &doc); err != nil {
			t.Fatalf("ng=%v: config is not YAML: %v\n%s", ng, err, got)
		}
		want := map[string]any{
			"default_account_id": id,
			"host":               "0.0.0.0",
			"port":               float64(7000),
			"metadata_storage": map[string]any{"postgresql": map[string]any{
				"host": pg.Host, "port": float64(5432), "database": pg.Database, "schema": pg.Schema,
			}},
		}
		if !ng {
			want["server_threads"] = float64(0)
			want["log_level"] = "information"
			s := want["metadata_storage"].(map[string]any)
			p := s["postgresql"].(map[string]any)
			p["connect_timeout_sec"] = float64(5)
			p["keepalive"] = map[string]any{"enabled": float64(1), "idle_sec": float64(120), "interval_sec": float64(30), "count": float64(5)}
			s["garbage_collection"] = map[string]any{"enabled": true, "interval_ms": float64(3600000), "time_horizon_sec": float64(86400)}
		}
		if diff := cmp.Diff(map[string]any{"pensieve_lite": want}, doc); diff != "" {
			t.Errorf("ng=%v: parsed config: -want, +got:\n%s", ng, diff)
		}
	}
}
