package kubectlfirebolt

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// apiRequest is what the fake API server saw of one request.
type apiRequest struct {
	Method, Path, Query, Body, ContentType string
}

// TestRESTCore: the binary's core/v1 and apps/v1 clients send each call to
// the path and with the query parameters client-go's typed clients use, and
// decode what the API server answers, a Status error included.
func TestRESTCore(t *testing.T) {
	var mu sync.Mutex
	var got []apiRequest
	answers := map[string]any{
		"/api/v1/namespaces/ns/pods": corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
			Items: []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "demo-g1-0"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}}},
		"/api/v1/namespaces/ns/services/gw": corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: "gw"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8080}}}},
		"/apis/apps/v1/namespaces/ns/statefulsets/demo-g1": appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
			ObjectMeta: metav1.ObjectMeta{Name: "demo-g1"}, Status: appsv1.StatefulSetStatus{ReadyReplicas: 2}},
		"/apis/apps/v1/deployments": appsv1.DeploymentList{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DeploymentList"},
			Items: []appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{Name: "firebolt-operator", Namespace: "firebolt-system"}}}},
		"/apis/apps/v1/namespaces/firebolt-system/deployments/firebolt-operator": appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "firebolt-operator", Namespace: "firebolt-system", Generation: 3}},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, apiRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: string(body), ContentType: r.Header.Get("Content-Type")})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		a, ok := answers[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
				Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound,
				Message: `statefulsets.apps "gone" not found`})
			return
		}
		_ = json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(srv.Close)

	c, err := newRESTCore(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	pods, err := c.ListPods(ctx, "ns", metav1.ListOptions{LabelSelector: "firebolt.io/engine=demo", Limit: 20})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Name != "demo-g1-0" || pods.Items[0].Status.Phase != corev1.PodRunning {
		t.Errorf("ListPods: %+v, %v", pods, err)
	}
	svc, err := c.GetService(ctx, "ns", "gw")
	if err != nil || svc.Name != "gw" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 {
		t.Errorf("GetService: %+v, %v", svc, err)
	}
	sts, err := c.GetStatefulSet(ctx, "ns", "demo-g1")
	if err != nil || sts.Status.ReadyReplicas != 2 {
		t.Errorf("GetStatefulSet: %+v, %v", sts, err)
	}
	if _, err := c.GetStatefulSet(ctx, "ns", "gone"); !kerrors.IsNotFound(err) || !strings.Contains(err.Error(), `"gone" not found`) {
		t.Errorf("GetStatefulSet of a missing one: %v, want the API server's NotFound", err)
	}
	ds, err := c.ListDeployments(ctx, metav1.NamespaceAll, metav1.ListOptions{LabelSelector: operatorSelector, Limit: listPageSize})
	if err != nil || len(ds.Items) != 1 || ds.Items[0].Namespace != "firebolt-system" {
		t.Errorf("ListDeployments: %+v, %v", ds, err)
	}
	d, err := c.GetDeployment(ctx, "firebolt-system", "firebolt-operator")
	if err != nil || d.Generation != 3 {
		t.Errorf("GetDeployment: %+v, %v", d, err)
	}
	if _, err := c.PatchDeployment(ctx, "firebolt-system", "firebolt-operator", types.MergePatchType, []byte(`{"spec":{"replicas":0}}`),
		metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		t.Errorf("PatchDeployment: %v", err)
	}
	pf := c.RESTClient().Post().Resource("pods").Namespace("ns").Name("demo-g1-0").SubResource("portforward").URL()
	if pf.Path != "/api/v1/namespaces/ns/pods/demo-g1-0/portforward" {
		t.Errorf("port-forward URL path %q", pf.Path)
	}

	want := []apiRequest{
		{Method: http.MethodGet, Path: "/api/v1/namespaces/ns/pods", Query: "labelSelector=firebolt.io%2Fengine%3Ddemo&limit=20"},
		{Method: http.MethodGet, Path: "/api/v1/namespaces/ns/services/gw"},
		{Method: http.MethodGet, Path: "/apis/apps/v1/namespaces/ns/statefulsets/demo-g1"},
		{Method: http.MethodGet, Path: "/apis/apps/v1/namespaces/ns/statefulsets/gone"},
		{Method: http.MethodGet, Path: "/apis/apps/v1/deployments", Query: "labelSelector=" + strings.ReplaceAll(strings.ReplaceAll(operatorSelector, "/", "%2F"), "=", "%3D") + "&limit=500"},
		{Method: http.MethodGet, Path: "/apis/apps/v1/namespaces/firebolt-system/deployments/firebolt-operator"},
		{Method: http.MethodPatch, Path: "/apis/apps/v1/namespaces/firebolt-system/deployments/firebolt-operator",
			Query: "fieldManager=" + FieldManager, Body: `{"spec":{"replicas":0}}`, ContentType: string(types.MergePatchType)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
