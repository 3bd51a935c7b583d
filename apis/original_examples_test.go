package apis_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
)

// originalExamples reads every compute.firebolt.io object of our fixtures
// shaped like the original operator's examples (testdata/original-shapes),
// keyed by file, kind and name.
func originalExamples(t *testing.T) map[string]map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "original-shapes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no original-shape fixtures: %v", err)
	}
	out := map[string]map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			m := parse(t, string(doc))
			if !strings.HasPrefix(m["apiVersion"].(string), "compute.firebolt.io/") { //nolint:forcetypeassert // Fixtures have an apiVersion.
				continue
			}
			md := m["metadata"].(map[string]any) //nolint:forcetypeassert // Fixtures have metadata.
			out[filepath.Base(f)+"/"+m["kind"].(string)+"/"+md["name"].(string)] = m
		}
	}
	return out
}

// TestOriginalExamplesStillValidate admits every Firebolt object of the
// fixtures that set the same fields as the original operator's examples, as
// a claim and as its composite. None may be refused: the privilege rules
// refuse only what those examples never ask for, and every feature they
// use (auto-stop among them) is implemented.
func TestOriginalExamplesStillValidate(t *testing.T) {
	for key, obj := range originalExamples(t) {
		t.Run(key, func(t *testing.T) {
			s := serversFor(t, obj["kind"].(string)) //nolint:forcetypeassert // Read above.
			for _, v := range []struct {
				name string
				srv  *server
				obj  map[string]any
			}{
				{"claim", s.claim, runtime.DeepCopyJSON(obj)},
				{"composite", s.composite, asComposite(runtime.DeepCopyJSON(obj))},
			} {
				got := v.srv.admit(v.obj, nil)
				for _, e := range got.Errors {
					t.Errorf("%s refused: %s", v.name, e)
				}
				if diff := cmp.Diff([]string(nil), got.Unknown); diff != "" {
					t.Errorf("%s unknown fields: -want, +got:\n%s", v.name, diff)
				}
			}
		})
	}
}
