package kubectlfirebolt

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// testNow is the fake clock.
var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testNamespace is the namespace of the fake kubeconfig context.
const testNamespace = "firebolt"

// fakeCluster is the fake API a test runs the plugin against.
type fakeCluster struct {
	dyn       *dynamicfake.FakeDynamicClient
	core      *kubefake.Clientset
	forwarder Forwarder
	scraper   Scraper
	// md is the metadata client (migrate); nil leaves Clients.Metadata
	// nil.
	md *metadatafake.FakeMetadataClient
	// flags records what the last newClients call was given.
	flags Flags
}

func newFakeCluster(t *testing.T, claims []*unstructured.Unstructured, core ...runtime.Object) *fakeCluster {
	t.Helper()
	objs := make([]runtime.Object, 0, len(claims))
	for _, c := range claims {
		objs = append(objs, c)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		engineResource:   "FireboltEngineList",
		instanceResource: "FireboltInstanceList",
		classResource:    "FireboltEngineClassList",
	}, objs...)
	return &fakeCluster{dyn: dyn, core: kubefake.NewClientset(core...)}
}

// fakeCore is Core over client-go's fake clientset, whose typed clients
// keep the objects a test starts with and record every action.
type fakeCore struct{ cs *kubefake.Clientset }

func (f fakeCore) RESTClient() rest.Interface { return f.cs.CoreV1().RESTClient() }

func (f fakeCore) ListPods(ctx context.Context, ns string, o metav1.ListOptions) (*corev1.PodList, error) {
	return f.cs.CoreV1().Pods(ns).List(ctx, o)
}

func (f fakeCore) GetService(ctx context.Context, ns, name string) (*corev1.Service, error) {
	return f.cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
}

func (f fakeCore) GetStatefulSet(ctx context.Context, ns, name string) (*appsv1.StatefulSet, error) {
	return f.cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
}

func (f fakeCore) GetDeployment(ctx context.Context, ns, name string) (*appsv1.Deployment, error) {
	return f.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
}

func (f fakeCore) ListDeployments(ctx context.Context, ns string, o metav1.ListOptions) (*appsv1.DeploymentList, error) {
	return f.cs.AppsV1().Deployments(ns).List(ctx, o)
}

func (f fakeCore) PatchDeployment(ctx context.Context, ns, name string, pt types.PatchType, patch []byte, o metav1.PatchOptions) (*appsv1.Deployment, error) {
	return f.cs.AppsV1().Deployments(ns).Patch(ctx, name, pt, patch, o)
}

// newClients is the fake NewClients: the namespace is -n, else the
// context's (testNamespace).
func (f *fakeCluster) newClients(fl Flags) (Clients, error) {
	f.flags = fl
	ns := fl.Namespace
	if ns == "" {
		ns = testNamespace
	}
	c := Clients{Dynamic: f.dyn, Core: fakeCore{f.core}, Namespace: ns, Forwarder: f.forwarder, Scraper: f.scraper, Now: func() time.Time { return testNow }}
	if f.md != nil {
		c.Metadata = f.md
	}
	return c, nil
}

// result is what one run printed and returned.
type result struct {
	Stdout, Stderr string
	Code           int
}

func (f *fakeCluster) run(t *testing.T, args ...string) result {
	t.Helper()
	return f.runCtx(t.Context(), args...)
}

func (f *fakeCluster) runCtx(ctx context.Context, args ...string) result {
	var out, errOut bytes.Buffer
	code := Run(ctx, args, &out, &errOut, f.newClients)
	return result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// obj decodes one YAML object.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("cannot decode test object: %v\n%s", err, y)
	}
	// As the API client decodes: integers are int64.
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatalf("cannot decode test object: %v\n%s", err, y)
	}
	return u
}

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("cannot read golden file (run with -update to write it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// kubeconfigFor writes a kubeconfig whose current context is server
// (no credentials) in namespace firebolt, for tests of the real clients.
func kubeconfigFor(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: " + server + "}\n" +
		"users:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context: {cluster: c, user: u, namespace: firebolt}\ncurrent-context: x\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
