package engine

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

var updateGoldens = flag.Bool("update", false, "rewrite the golden files under testdata")

// renderGolden renders one generation plus the routing Service as a YAML
// stream and diffs it whole against testdata/render/<name>.yaml.
func renderGolden(t *testing.T, name string, in Inputs, gen int) {
	t.Helper()
	r := renderFor(in, gen, in.Spec)
	diffGolden(t, name, r.Objects.ConfigMap, r.Objects.Headless, r.Objects.StatefulSet, RenderRoutingService(Routing{Engine: in.Engine, Namespace: in.Namespace, Gen: gen, Instance: in.Spec.InstanceRef}))
}

// diffGolden diffs objs, as a YAML stream, against
// testdata/render/<name>.yaml (rewriting it first with -update).
func diffGolden(t *testing.T, name string, objs ...map[string]any) {
	t.Helper()
	var got []byte
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		got = append(append(got, "---\n"...), b...)
	}
	file := filepath.Join("testdata", "render", name+".yaml")
	if *updateGoldens {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./fn/engine -run TestRender -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("rendered objects differ from %s: -want, +got:\n%s", file, diff)
	}
}

func raw(t *testing.T, s string) *runtime.RawExtension {
	t.Helper()
	b, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: b}
}

func TestRenderGeneration(t *testing.T) {
	t.Run("Default", func(t *testing.T) {
		renderGolden(t, "default", testInputs(t, "creating", 2, 1), 2)
	})

	t.Run("ClassEngineMerge", func(t *testing.T) {
		in := testInputs(t, "creating", 7, 6)
		in.Spec.Replicas = 3
		in.Spec.EngineClassRef = classRef("big")
		in.Spec.MetadataEndpointOverride = ptrTo("meta.other-cluster.example:7000")
		in.Spec.Storage = v1alpha1.EngineStorageSpec{PersistentVolumeClaim: &v1alpha1.PersistentVolumeClaimStorageSpec{
			Size: resource.MustParse("10Gi"), StorageClassName: ptrTo("fast"),
		}}
		in.Spec.CustomEngineConfig = raw(t, `
schema_version: "9"
instance: {id: hijacked, region: eu}
engine: {nodes: [], cache: {size: 2}}
storage: {path_style_addressing: true}
`)
		in.Spec.Template = &corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{
				Tolerations: []corev1.Toleration{{Key: "engine", Operator: corev1.TolerationOpExists}},
				Containers: []corev1.Container{{
					Name: "engine",
					Env:  []corev1.EnvVar{{Name: "FROM_ENGINE", Value: "2"}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi")},
					},
				}},
			},
		}
		in.Spec.Template.Labels = map[string]string{"app": "analytics"}
		in.Class = foundClass("big", corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{
				ServiceAccountName: "engines",
				Tolerations:        []corev1.Toleration{{Key: "class", Operator: corev1.TolerationOpExists}},
				Containers: []corev1.Container{
					{Name: "engine", Image: "registry.example/engine:4.2", Env: []corev1.EnvVar{{Name: "FROM_CLASS", Value: "1"}}},
					{Name: "logger", Image: "registry.example/logger:1"},
				},
				Volumes: []corev1.Volume{{Name: "extra", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			},
		})
		in.Class.Spec.Template.Labels = map[string]string{"team": "data", "app": "class"}
		in.Class.Spec.UISidecar = ptrTo(true)
		in.Config.Images.EngineUI = "registry.example/firebolt-core-ui:1.2.0"
		in.Class.Spec.Storage = v1alpha1.EngineStorageSpec{HostPath: &v1alpha1.HostPathStorageSpec{Path: "/ignored"}}
		in.Class.Spec.CustomEngineConfig = raw(t, `
logging: {format: text}
storage: {managed_table_bucket_name: warehouse}
`)
		renderGolden(t, "class-engine-merge", in, 7)
	})

	t.Run("HostPathAtZeroReplicas", func(t *testing.T) {
		in := testInputs(t, "creating", 1, 0)
		in.Spec.Replicas = 0
		in.Spec.Storage = v1alpha1.EngineStorageSpec{HostPath: &v1alpha1.HostPathStorageSpec{Path: "/mnt/firebolt", Type: ptrTo(corev1.HostPathDirectoryOrCreate)}}
		in.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "engine", Image: "registry.example/engine:4.2", ImagePullPolicy: corev1.PullAlways}}}}
		renderGolden(t, "hostpath-zero-replicas", in, 1)
	})
}

// TestRenderIsDeterministic renders the same inputs repeatedly: map order
// must never leak into the rendering, or every call would look like drift.
func TestRenderIsDeterministic(t *testing.T) {
	in := testInputs(t, "stable", 0, 0)
	in.Spec.CustomEngineConfig = raw(t, `{a: {b: 1, c: [1, 2]}, d: x, e: {f: {g: h}}}`)
	in.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"a": "1", "b": "2", "c": "3"}}}
	want := renderFor(in, 0, in.Spec)
	for range 50 {
		got := renderFor(in, 0, in.Spec)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(Recording{})); diff != "" {
			t.Fatalf("renderings of equal inputs differ: -first, +later:\n%s", diff)
		}
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	cases := map[string]corev1.PullPolicy{
		"ghcr.io/firebolt-db/engine":                   corev1.PullAlways,
		"ghcr.io/firebolt-db/engine:latest":            corev1.PullAlways,
		"ghcr.io/firebolt-db/engine:dev":               corev1.PullAlways,
		"ghcr.io/firebolt-db/engine:4.29.1":            corev1.PullIfNotPresent,
		"localhost:5000/engine":                        corev1.PullAlways,
		"localhost:5000/engine:1":                      corev1.PullIfNotPresent,
		"ghcr.io/firebolt-db/engine@sha256:0123456789": corev1.PullIfNotPresent,
	}
	for image, want := range cases {
		if got := defaultPullPolicy(image); got != want {
			t.Errorf("defaultPullPolicy(%q): want %s, got %s", image, want, got)
		}
	}
}

func TestCustomConfigStripsOwnedPaths(t *testing.T) {
	cases := map[string]struct {
		in   string
		want map[string]any
	}{
		"OwnedPathsDropped": {
			in:   `{schema_version: "2", endpoints: {http: {}}, instance: {id: x, type: y, multi_engine: {}, auth: {}, keep: 1}, engine: {id: e, nodes: [], termination_grace_period: 1s, keep: 2}, other: 3}`,
			want: map[string]any{"instance": map[string]any{"keep": float64(1)}, "engine": map[string]any{"keep": float64(2)}, "other": float64(3)},
		},
		"NonObjectSectionsDropped": {
			in:   `{instance: 1, engine: [1], storage: {a: b}}`,
			want: map[string]any{"storage": map[string]any{"a": "b"}},
		},
		"OnlyOwnedPathsIsEmpty": {
			in:   `{instance: {id: x}}`,
			want: nil,
		},
		"NotAnObject": {
			in:   `[1, 2]`,
			want: nil,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, customConfig(raw(t, tc.in))); diff != "" {
				t.Errorf("customConfig(%s): -want, +got:\n%s", tc.in, diff)
			}
		})
	}
}
