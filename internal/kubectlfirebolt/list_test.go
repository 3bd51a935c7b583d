package kubectlfirebolt

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestList runs instance list and engine list in every output format and
// compares the whole output; json and yaml against golden files.
func TestList(t *testing.T) {
	cases := map[string]struct {
		args   []string
		want   result
		golden string
	}{
		"InstanceTable": {
			args: []string{"instance", "list"},
			want: result{Stdout: "" +
				"NAME      PHASE          READY\n" +
				"demo      Ready          True\n" +
				"fresh     -              -\n" +
				"staging   Provisioning   False\n"},
		},
		"InstanceWideIsTheTable": {
			args: []string{"instance", "list", "-o", "wide"},
			want: result{Stdout: "" +
				"NAME      PHASE          READY\n" +
				"demo      Ready          True\n" +
				"fresh     -              -\n" +
				"staging   Provisioning   False\n"},
		},
		"InstanceName": {
			args: []string{"instance", "list", "-o", "name"},
			want: result{Stdout: "fireboltinstance/demo\nfireboltinstance/fresh\nfireboltinstance/staging\n"},
		},
		"InstanceJSON": {args: []string{"instance", "list", "-o", "json"}, golden: "list/instances.json"},
		"InstanceYAML": {args: []string{"-o", "yaml", "instance", "list"}, golden: "list/instances.yaml"},
		"InstanceOtherNamespace": {
			args: []string{"instance", "list", "-n", "other"},
			want: result{Stdout: "NAME        PHASE   READY\nelsewhere   Ready   -\n"},
		},
		"InstanceNone": {
			args: []string{"instance", "list", "-n", "empty"},
			want: result{Stderr: "No resources found in empty namespace.\n"},
		},
		"EngineTable": {
			args: []string{"engine", "list"},
			want: result{Stdout: "" +
				"NAME        INSTANCE   PHASE      READY\n" +
				"adhoc       demo       creating   False\n" +
				"analytics   demo       stable     True\n" +
				"new         staging    -          -\n" +
				"nightly     staging    stopped    -\n"},
		},
		"EngineWide": {
			args: []string{"engine", "list", "-o", "wide"},
			want: result{Stdout: "" +
				"NAME        INSTANCE   PHASE      READY   CLASS      REPLICAS\n" +
				"adhoc       demo       creating   False   -          1\n" +
				"analytics   demo       stable     True    standard   2\n" +
				"new         staging    -          -       -          4\n" +
				"nightly     staging    stopped    -       -          0\n"},
		},
		"EngineOfInstance": {
			args: []string{"engine", "list", "--instance", "staging"},
			want: result{Stdout: "" +
				"NAME      INSTANCE   PHASE     READY\n" +
				"new       staging    -         -\n" +
				"nightly   staging    stopped   -\n"},
		},
		"EngineOfInstanceName": {
			args: []string{"engine", "list", "--instance", "demo", "-o", "name"},
			want: result{Stdout: "fireboltengine/adhoc\nfireboltengine/analytics\n"},
		},
		"EngineOfNoInstance": {
			args: []string{"engine", "list", "--instance", "nope"},
			want: result{Stderr: "No resources found in firebolt namespace.\n"},
		},
		"EngineNoneAsJSON": {
			args: []string{"engine", "list", "-n", "empty", "-o", "json"},
			want: result{Stdout: "{\n    \"apiVersion\": \"v1\",\n    \"items\": [],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n"},
		},
		"EngineJSON": {args: []string{"engine", "list", "--instance", "demo", "-o", "json"}, golden: "list/engines.json"},
		"EngineYAML": {args: []string{"engine", "list", "-o", "yaml"}, golden: "list/engines.yaml"},
		"BadOutput": {
			args: []string{"engine", "list", "-o", "xml"},
			want: result{Code: 1, Stderr: "error: --output must be one of \"table\",\"wide\",\"json\",\"yaml\",\"name\" but got \"xml\"\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeCluster(t, append(instances(t), engines(t)...))
			got := f.run(t, tc.args...)
			if tc.golden != "" {
				if got.Code != 0 || got.Stderr != "" {
					t.Fatalf("exit %d, stderr %q", got.Code, got.Stderr)
				}
				golden(t, tc.golden, got.Stdout)
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kubectl firebolt %v (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// TestListJSONIsAList: -o json is a List of the full objects, which
// decodes back to what the API server holds.
func TestListJSONIsAList(t *testing.T) {
	f := newFakeCluster(t, engines(t))
	got := f.run(t, "engine", "list", "-o", "json")
	l := obj(t, got.Stdout)
	items, _, _ := unstructured.NestedSlice(l.Object, "items")
	names := make([]string, 0, len(items))
	for _, i := range items {
		u := unstructured.Unstructured{Object: i.(map[string]any)}
		names = append(names, u.GetName())
		want := findByName(engines(t), u.GetName())
		if diff := cmp.Diff(want.Object, u.Object); diff != "" {
			t.Errorf("item %s is not the full object (-want +got):\n%s", u.GetName(), diff)
		}
	}
	if diff := cmp.Diff([]string{"adhoc", "analytics", "new", "nightly"}, names); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if l.GetKind() != "List" || l.GetAPIVersion() != "v1" {
		t.Errorf("kind %s apiVersion %s, want List v1", l.GetKind(), l.GetAPIVersion())
	}
}

func findByName(us []*unstructured.Unstructured, name string) *unstructured.Unstructured {
	for _, u := range us {
		if u.GetName() == name {
			return u
		}
	}
	return nil
}
