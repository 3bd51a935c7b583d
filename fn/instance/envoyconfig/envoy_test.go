package envoyconfig

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"
	"pgregory.net/rapid"
	"sigs.k8s.io/yaml"

	// Every message packed in a typed_config must resolve when parse reads
	// the config; these two are used nowhere else in the tests.
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
)

// The function renders envoy.yaml from its own small types (types.go), so
// that go-control-plane stays out of its binary. These tests keep that
// rendering checked against Envoy's API: parse decodes it into
// go-control-plane's Bootstrap with protojson (unknown fields and
// unresolvable @types rejected) and runs the generated ValidateAll on it and
// on every message packed inside it.

// TestConfigIsValidEnvoyForAnyInstance: every instance the validation lets
// through yields a config Envoy's API accepts. Config's output depends only
// on the validated Params, so this covers what the function can render.
func TestConfigIsValidEnvoyForAnyInstance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genParams().Draw(t, "p")
		y, err := Config(p)
		if err != nil {
			t.Fatalf("Config(%+v): %v", p, err)
		}
		parse(t, y)
	})
}

// TestRecordedConfigsAreValidEnvoy parses every envoy.yaml kept in the
// repository: this package's goldens and the gateway ConfigMaps of the
// render examples (examples/render/*/expected.yaml).
func TestRecordedConfigsAreValidEnvoy(t *testing.T) {
	goldens, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(goldens) != len(goldenParams) {
		t.Fatalf("testdata holds %d goldens, want %d", len(goldens), len(goldenParams))
	}
	for _, path := range goldens {
		t.Run(path, func(t *testing.T) {
			y, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			parse(t, y)
		})
	}

	rendered, err := filepath.Glob(filepath.Join("..", "..", "..", "examples", "render", "*", "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	found, sds := 0, 0
	for _, path := range rendered {
		for _, files := range gatewayConfigs(t, path) {
			found++
			t.Run(path, func(t *testing.T) {
				parse(t, []byte(files[ConfigKey]))
				for k, y := range files {
					if k != ConfigKey {
						sds++
						parseSDS(t, y)
					}
				}
			})
		}
	}
	// instance-gateway-tls renders both SDS files.
	if sds < 2 {
		t.Fatalf("found %d SDS files in the render examples, want at least 2", sds)
	}
	// The five instance examples each render one gateway ConfigMap.
	if found < 5 {
		t.Fatalf("found %d envoy.yaml in %d render examples, want at least 5", found, len(rendered))
	}
}

// gatewayConfigs returns the files of every gateway ConfigMap (one holding
// envoy.yaml) in a multi-document YAML file.
func gatewayConfigs(t *testing.T, path string) []map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, doc := range bytes.Split(b, []byte("\n---\n")) {
		var o struct {
			Kind string            `json:"kind"`
			Data map[string]string `json:"data"`
		}
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if _, ok := o.Data[ConfigKey]; ok && o.Kind == "ConfigMap" {
			out = append(out, o.Data)
		}
	}
	return out
}

// TestDurationIsProtoJSON: the durations envoy.yaml carries are written as
// protojson writes google.protobuf.Duration.
func TestDurationIsProtoJSON(t *testing.T) {
	for _, d := range []time.Duration{0, time.Nanosecond, time.Microsecond, 25 * time.Millisecond, 250 * time.Millisecond,
		time.Second, 5 * time.Second, 300 * time.Second, 1500 * time.Microsecond, -250 * time.Millisecond, -3 * time.Second} {
		want, err := protojson.Marshal(durationpb.New(d))
		if err != nil {
			t.Fatal(err)
		}
		got, err := dur(d).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("duration(%v) = %s, protojson writes %s", d, got, want)
		}
	}
}
