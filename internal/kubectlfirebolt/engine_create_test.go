package kubectlfirebolt

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

const noBucketWarning = "warning: no object storage: neither --bucket nor the engine class sets customEngineConfig.storage.managed_table_bucket_name, so the engine has nowhere to keep managed tables\n"

func classes(t *testing.T) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngineClass
metadata: {name: standard, namespace: firebolt}
spec:
  customEngineConfig:
    storage: {managed_table_storage: s3, managed_table_bucket_name: warehouse}
`),
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngineClass
metadata: {name: bare, namespace: firebolt}
spec: {}
`),
	}
}

// TestEngineCreate: engine create applies exactly the fields its flags
// set, server-side as kubectl-firebolt, says whether it created, changed
// or left the engine, and waits (unless at zero replicas) until the spec
// is in effect, printing each phase.
func TestEngineCreate(t *testing.T) {
	settled := []map[string]any{status("creating", 0, "False"), status("stable", 1, "True")}
	cases := map[string]struct {
		existing []*unstructured.Unstructured
		args     []string
		statuses []map[string]any
		want     result
		// spec is the spec applied, in the only patch sent.
		spec map[string]any
	}{
		"Minimal": {
			args:     []string{"engine", "create", "demo", "--instance", "demo"},
			statuses: settled,
			spec:     map[string]any{"instanceRef": "demo", "replicas": float64(1)},
			want: result{
				Stdout: "fireboltengine/demo created\n" +
					"fireboltengine/demo: no phase yet (spec generation 1, 0 in effect)\n" +
					"fireboltengine/demo: creating (spec generation 1, 0 in effect)\n" +
					"fireboltengine/demo: stable and Ready, generation 1 of the spec in effect\n",
				Stderr: noBucketWarning,
			},
		},
		"EveryFlag": {
			args: []string{"engine", "create", "demo", "--instance", "demo", "--replicas", "3", "--type", "bare",
				"--image", "ghcr.io/firebolt-db/engine:4.30", "--bucket", "my.bucket-1", "--storage-type", "gcs",
				"--host-path", "/mnt/firebolt", "--timeout", "1m"},
			statuses: settled,
			spec: map[string]any{
				"instanceRef": "demo", "replicas": float64(3), "engineClassRef": "bare",
				"template": map[string]any{"spec": map[string]any{"containers": []any{
					map[string]any{"name": "engine", "image": "ghcr.io/firebolt-db/engine:4.30"},
				}}},
				"storage": map[string]any{"hostPath": map[string]any{"path": "/mnt/firebolt", "type": "DirectoryOrCreate"}},
				"customEngineConfig": map[string]any{"storage": map[string]any{
					"managed_table_storage": "gcs", "managed_table_bucket_name": "my.bucket-1",
				}},
			},
			want: result{Stdout: "fireboltengine/demo created\n" +
				"fireboltengine/demo: no phase yet (spec generation 1, 0 in effect)\n" +
				"fireboltengine/demo: creating (spec generation 1, 0 in effect)\n" +
				"fireboltengine/demo: stable and Ready, generation 1 of the spec in effect\n"},
		},
		"BucketDefaultsToS3": {
			args:     []string{"engine", "create", "demo", "--instance", "demo", "--bucket", "lake", "--replicas", "0"},
			spec:     map[string]any{"instanceRef": "demo", "replicas": float64(0), "customEngineConfig": map[string]any{"storage": map[string]any{"managed_table_storage": "s3", "managed_table_bucket_name": "lake"}}},
			want:     result{Stdout: "fireboltengine/demo created\n0 replicas: not waiting for the engine to be ready\n"},
			statuses: nil,
		},
		"LegacyS3Bucket": {
			args:     []string{"engine", "create", "demo", "--instance", "demo", "--bucket", "Legacy_Lake.2015", "--replicas", "0"},
			spec:     map[string]any{"instanceRef": "demo", "replicas": float64(0), "customEngineConfig": map[string]any{"storage": map[string]any{"managed_table_storage": "s3", "managed_table_bucket_name": "Legacy_Lake.2015"}}},
			want:     result{Stdout: "fireboltengine/demo created\n0 replicas: not waiting for the engine to be ready\n"},
			statuses: nil,
		},
		"GCSBucketWithUnderscore": {
			args:     []string{"engine", "create", "demo", "--instance", "demo", "--bucket", "my_lake", "--storage-type", "gcs", "--replicas", "0"},
			spec:     map[string]any{"instanceRef": "demo", "replicas": float64(0), "customEngineConfig": map[string]any{"storage": map[string]any{"managed_table_storage": "gcs", "managed_table_bucket_name": "my_lake"}}},
			want:     result{Stdout: "fireboltengine/demo created\n0 replicas: not waiting for the engine to be ready\n"},
			statuses: nil,
		},
		"ClassGivesTheBucket": {
			args:     []string{"engine", "create", "demo", "--instance", "demo", "--type", "standard"},
			statuses: settled,
			spec:     map[string]any{"instanceRef": "demo", "replicas": float64(1), "engineClassRef": "standard"},
			want: result{Stdout: "fireboltengine/demo created\n" +
				"fireboltengine/demo: no phase yet (spec generation 1, 0 in effect)\n" +
				"fireboltengine/demo: creating (spec generation 1, 0 in effect)\n" +
				"fireboltengine/demo: stable and Ready, generation 1 of the spec in effect\n"},
		},
		"ClassWithoutBucketWarns": {
			args: []string{"engine", "create", "demo", "--instance", "demo", "--type", "bare", "--replicas", "0"},
			spec: map[string]any{"instanceRef": "demo", "replicas": float64(0), "engineClassRef": "bare"},
			want: result{Stdout: "fireboltengine/demo created\n0 replicas: not waiting for the engine to be ready\n", Stderr: noBucketWarning},
		},
		"ClassMissing": {
			args: []string{"engine", "create", "demo", "--instance", "demo", "--type", "nope"},
			want: result{Code: 1, Stderr: "error: --type: fireboltengineclass \"nope\" not found in namespace \"firebolt\"\n"},
		},
		"Configured": {
			existing: []*unstructured.Unstructured{obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: demo, namespace: firebolt, generation: 4}
spec: {instanceRef: demo, replicas: 2, customEngineConfig: {storage: {managed_table_bucket_name: lake}}}
status: {phase: stable, observedGeneration: 4}
`)},
			args:     []string{"engine", "create", "demo", "--instance", "demo", "--replicas", "3", "--bucket", "lake"},
			statuses: []map[string]any{status("creating", 4, "False"), status("switching", 4, "False"), status("draining", 4, "False"), status("stable", 5, "True")},
			spec:     map[string]any{"instanceRef": "demo", "replicas": float64(3), "customEngineConfig": map[string]any{"storage": map[string]any{"managed_table_storage": "s3", "managed_table_bucket_name": "lake"}}},
			want: result{Stdout: "fireboltengine/demo configured\n" +
				"fireboltengine/demo: stable (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: creating (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: switching (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: draining (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: stable and Ready, generation 5 of the spec in effect\n"},
		},
		"Unchanged": {
			existing: []*unstructured.Unstructured{obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: demo, namespace: firebolt, generation: 2}
spec: {instanceRef: demo, replicas: 1, engineClassRef: standard}
status:
  phase: stable
  observedGeneration: 2
  conditions: [{type: Ready, status: "True", reason: Available}]
`)},
			args: []string{"engine", "create", "demo", "--instance", "demo", "--type", "standard"},
			spec: map[string]any{"instanceRef": "demo", "replicas": float64(1), "engineClassRef": "standard"},
			want: result{Stdout: "fireboltengine/demo unchanged\nfireboltengine/demo: stable and Ready, generation 2 of the spec in effect\n"},
		},
		"OutputName": {
			args:     []string{"engine", "create", "demo", "--instance", "demo", "--type", "standard", "-o", "name"},
			statuses: settled,
			spec:     map[string]any{"instanceRef": "demo", "replicas": float64(1), "engineClassRef": "standard"},
			want: result{
				Stdout: "fireboltengine/demo\n",
				Stderr: "fireboltengine/demo created\n" +
					"fireboltengine/demo: no phase yet (spec generation 1, 0 in effect)\n" +
					"fireboltengine/demo: creating (spec generation 1, 0 in effect)\n" +
					"fireboltengine/demo: stable and Ready, generation 1 of the spec in effect\n",
			},
		},
		"OutputYAML": {
			args:     []string{"engine", "create", "demo", "--instance", "demo", "--type", "standard", "-o", "yaml"},
			statuses: settled,
			spec:     map[string]any{"instanceRef": "demo", "replicas": float64(1), "engineClassRef": "standard"},
			want: result{
				Stdout: "apiVersion: compute.firebolt.io/v1alpha1\nkind: FireboltEngine\nmetadata:\n  generation: 1\n  name: demo\n  namespace: firebolt\n" +
					"spec:\n  engineClassRef: standard\n  instanceRef: demo\n  replicas: 1\n" +
					"status:\n  conditions:\n  - reason: Available\n    status: \"True\"\n    type: Ready\n  observedGeneration: 1\n  phase: stable\n",
				Stderr: "fireboltengine/demo created\n" +
					"fireboltengine/demo: no phase yet (spec generation 1, 0 in effect)\n" +
					"fireboltengine/demo: creating (spec generation 1, 0 in effect)\n" +
					"fireboltengine/demo: stable and Ready, generation 1 of the spec in effect\n",
			},
		},
		"OutputJSONAtZeroReplicas": {
			args: []string{"engine", "create", "demo", "--instance", "demo", "--type", "standard", "--replicas", "0", "-o", "json"},
			spec: map[string]any{"instanceRef": "demo", "replicas": float64(0), "engineClassRef": "standard"},
			want: result{
				Stdout: "{\n    \"apiVersion\": \"compute.firebolt.io/v1alpha1\",\n    \"kind\": \"FireboltEngine\",\n    \"metadata\": {\n        \"generation\": 1,\n        \"name\": \"demo\",\n        \"namespace\": \"firebolt\"\n    },\n" +
					"    \"spec\": {\n        \"engineClassRef\": \"standard\",\n        \"instanceRef\": \"demo\",\n        \"replicas\": 0\n    }\n}\n",
				Stderr: "fireboltengine/demo created\n0 replicas: not waiting for the engine to be ready\n",
			},
		},
		"TimesOut": {
			args:     []string{"engine", "create", "demo", "--instance", "demo", "--type", "standard", "--timeout", "50ms"},
			statuses: []map[string]any{status("creating", 0, "False")},
			spec:     map[string]any{"instanceRef": "demo", "replicas": float64(1), "engineClassRef": "standard"},
			want: result{
				Code: 1,
				Stdout: "fireboltengine/demo created\n" +
					"fireboltengine/demo: no phase yet (spec generation 1, 0 in effect)\n" +
					"fireboltengine/demo: creating (spec generation 1, 0 in effect)\n",
				Stderr: "error: timed out after 50ms waiting for fireboltengine/demo: last phase creating, spec generation 1, 0 in effect\n  Ready=False Creating\n",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeCluster(t, append(append(instances(t), classes(t)...), tc.existing...))
			w := watch.NewRaceFreeFake()
			f.watches(w)
			ap := f.applies(t, w, tc.statuses...)
			got := f.run(t, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kubectl firebolt %v (-want +got):\n%s", tc.args, diff)
			}
			var want []appliedPatch
			if tc.spec != nil {
				want = []appliedPatch{{Name: "demo", Type: types.ApplyPatchType, FieldManager: "kubectl-firebolt", Body: map[string]any{
					"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngine",
					"metadata": map[string]any{"name": "demo", "namespace": "firebolt"},
					"spec":     tc.spec,
				}}}
			}
			if diff := cmp.Diff(want, ap.patches); diff != "" {
				t.Errorf("patches (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEngineCreateBadFlags: every flag with a value it cannot take is
// refused before anything is sent, naming the flag and the rule.
func TestEngineCreateBadFlags(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"NoInstance":      {[]string{"demo"}, `missing flags: --instance=STRING`},
		"NoName":          {[]string{"--instance", "demo"}, `expected "<name>"`},
		"Name":            {[]string{"Demo_1", "--instance", "demo"}, `engine name "Demo_1": must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter, ending with a letter or digit) of at most 47 characters`},
		"NameTooLong":     {[]string{"a234567890123456789012345678901234567890123456789", "--instance", "demo"}, `engine name "a234567890123456789012345678901234567890123456789": must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter, ending with a letter or digit) of at most 47 characters`},
		"Instance":        {[]string{"demo", "--instance", "9lives"}, `--instance "9lives": must be a DNS-1035 label of at most 40 characters`},
		"NegativeReplica": {[]string{"demo", "--instance", "demo", "--replicas=-1"}, `--replicas -1: must be between 0 and 1000`},
		"TooManyReplicas": {[]string{"demo", "--instance", "demo", "--replicas", "1001"}, `--replicas 1001: must be between 0 and 1000`},
		"NotANumber":      {[]string{"demo", "--instance", "demo", "--replicas", "two"}, `--replicas: expected a valid 64 bit int but got "two"`},
		"Type":            {[]string{"demo", "--instance", "demo", "--type", "Big.Class"}, `--type "Big.Class": must be a DNS-1123 label (lower-case letters, digits and '-') of at most 63 characters`},
		"Image":           {[]string{"demo", "--instance", "demo", "--image", "engine 4.2"}, `--image "engine 4.2": must be an image reference without whitespace, at most 1024 characters`},
		"StorageType":     {[]string{"demo", "--instance", "demo", "--bucket", "lake", "--storage-type", "hdfs"}, `--storage-type "hdfs": must be one of s3, gcs, abs`},
		"StorageTypeOnly": {[]string{"demo", "--instance", "demo", "--storage-type", "gcs"}, `--storage-type gcs: needs --bucket, the bucket it names the store of`},
		"Bucket":          {[]string{"demo", "--instance", "demo", "--bucket", "my bucket"}, `--bucket "my bucket": an S3 bucket name must be 3 to 255 letters, digits, '.', '-' and '_', starting and ending with a letter or digit`},
		"ShortBucket":     {[]string{"demo", "--instance", "demo", "--bucket", "ab"}, `--bucket "ab": an S3 bucket name must be 3 to 255 letters, digits, '.', '-' and '_', starting and ending with a letter or digit`},
		"BucketPath":      {[]string{"demo", "--instance", "demo", "--bucket", "lake/tables"}, `--bucket "lake/tables": an S3 bucket name must be 3 to 255 letters, digits, '.', '-' and '_', starting and ending with a letter or digit`},
		"GCSUpperCase":    {[]string{"demo", "--instance", "demo", "--bucket", "My_Lake", "--storage-type", "gcs"}, `--bucket "My_Lake": a GCS bucket name must be 3 to 222 lower-case letters, digits, '.', '-' and '_', starting and ending with a letter or digit`},
		"AzureContainer":  {[]string{"demo", "--instance", "demo", "--bucket", "my.lake", "--storage-type", "abs"}, `--bucket "my.lake": an Azure Blob Storage container name must be 3 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit`},
		"RelativeHost":    {[]string{"demo", "--instance", "demo", "--host-path", "data/firebolt"}, `--host-path "data/firebolt": must be a clean absolute path such as /mnt/firebolt`},
		"UncleanHostPath": {[]string{"demo", "--instance", "demo", "--host-path", "/mnt/../etc"}, `--host-path "/mnt/../etc": must be a clean absolute path such as /mnt/firebolt`},
		"Timeout":         {[]string{"demo", "--instance", "demo", "--timeout", "0s"}, `--timeout 0s: must be a positive duration such as 90s or 5m`},
		"Several": {[]string{"demo", "--instance", "demo", "--replicas", "1001", "--host-path", "rel"},
			`--replicas 1001: must be between 0 and 1000; --host-path "rel": must be a clean absolute path such as /mnt/firebolt`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeCluster(t, instances(t))
			got := f.run(t, append([]string{"engine", "create"}, tc.args...)...)
			want := result{Code: 1, Stderr: "error: " + tc.want + "\n"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, a := range f.dyn.Actions() {
				if a.GetVerb() != "get" {
					t.Errorf("a refused create sent %s %s", a.GetVerb(), a.GetResource().Resource)
				}
			}
		})
	}
}
