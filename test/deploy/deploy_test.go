// Package deploy checks the manifests in deploy/ that a Configuration package
// cannot carry, decoded strictly into Crossplane's own API types.
package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	pkgmetav1 "github.com/crossplane/crossplane/apis/v2/pkg/meta/v1"
	pkgv1beta1 "github.com/crossplane/crossplane/apis/v2/pkg/v1beta1"

	"github.com/firebolt-db/firebolt-crossplane/fn/statemetrics"
)

// The function's Deployment reserves what it needs and is bounded in memory,
// so one cluster's busy drain checks cannot take a node down with it.
func TestFunctionRuntimeHasResources(t *testing.T) {
	b, err := os.ReadFile("../../deploy/function-runtime.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rc *pkgv1beta1.DeploymentRuntimeConfig
	docs := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		raw, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Kind != "DeploymentRuntimeConfig" {
			continue
		}
		rc = &pkgv1beta1.DeploymentRuntimeConfig{}
		if err := yaml.UnmarshalStrict(raw, rc); err != nil {
			t.Fatalf("DeploymentRuntimeConfig does not decode strictly: %v", err)
		}
	}
	if rc == nil || rc.Spec.DeploymentTemplate == nil || rc.Spec.DeploymentTemplate.Spec == nil {
		t.Fatal("deploy/function-runtime.yaml has no DeploymentRuntimeConfig with a deployment template")
	}
	var runtime *corev1.Container
	for i, c := range rc.Spec.DeploymentTemplate.Spec.Template.Spec.Containers {
		if c.Name == "package-runtime" {
			runtime = &rc.Spec.DeploymentTemplate.Spec.Template.Spec.Containers[i]
		}
	}
	if runtime == nil {
		t.Fatal("no package-runtime container: Crossplane would not apply its settings to the function")
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := runtime.Resources.Requests[r]; !ok || q.IsZero() {
			t.Errorf("package-runtime requests no %s", r)
		}
	}
	req, lim := runtime.Resources.Requests[corev1.ResourceMemory], runtime.Resources.Limits[corev1.ResourceMemory]
	if lim.IsZero() {
		t.Error("package-runtime has no memory limit")
	} else if lim.Cmp(req) < 0 {
		t.Errorf("memory limit %s is below the request %s", lim.String(), req.String())
	}
}

// readDocs decodes the YAML documents of a file in deploy/ (or the
// repository root) by kind and name, keeping each document's raw bytes for
// strict decoding.
func readDocs(t *testing.T, path string) map[string][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	docs := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		raw, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Kind != "" {
			out[doc.Kind+"/"+doc.Metadata.Name] = raw
		}
	}
}

// The provider the Configuration depends on runs with server-side apply
// under the service account deploy/ grants the StatefulSets it patches,
// whichever way it was installed: the ImageConfig that matches the
// dependency's package selects the runtime config that says so.
func TestProviderKubernetesRuntime(t *testing.T) {
	var meta pkgmetav1.Configuration
	if err := yaml.Unmarshal(readDocs(t, "../../crossplane.yaml")["Configuration/configuration-firebolt"], &meta); err != nil {
		t.Fatal(err)
	}
	var pkg string
	for _, d := range meta.Spec.DependsOn {
		if d.Kind != nil && *d.Kind == "Provider" && d.Package != nil && strings.HasSuffix(*d.Package, "/provider-kubernetes") {
			pkg = *d.Package
		}
	}
	if pkg == "" {
		t.Fatalf("crossplane.yaml does not depend on provider-kubernetes: %+v", meta.Spec.DependsOn)
	}

	// The ImageConfig for the dependency's path.
	var rcName string
	for key, raw := range readDocs(t, "../../deploy/imageconfig.yaml") {
		ic := &pkgv1beta1.ImageConfig{}
		if err := yaml.UnmarshalStrict(raw, ic); err != nil {
			t.Fatalf("%s does not decode strictly: %v", key, err)
		}
		for _, m := range ic.Spec.MatchImages {
			if strings.HasPrefix(pkg, m.Prefix) && ic.Spec.Runtime != nil && ic.Spec.Runtime.ConfigReference != nil {
				rcName = ic.Spec.Runtime.ConfigReference.Name
			}
		}
	}
	if rcName == "" {
		t.Fatalf("no ImageConfig in deploy/imageconfig.yaml gives %s a runtime config", pkg)
	}

	docs := readDocs(t, "../../deploy/provider-kubernetes.yaml")
	rc := &pkgv1beta1.DeploymentRuntimeConfig{}
	if err := yaml.UnmarshalStrict(docs["DeploymentRuntimeConfig/"+rcName], rc); err != nil {
		t.Fatalf("DeploymentRuntimeConfig %s is missing from deploy/provider-kubernetes.yaml or does not decode strictly: %v", rcName, err)
	}
	if rc.Spec.ServiceAccountTemplate == nil || rc.Spec.ServiceAccountTemplate.Metadata == nil || ptr.Deref(rc.Spec.ServiceAccountTemplate.Metadata.Name, "") == "" {
		t.Fatal("the runtime config does not fix the provider's service account name, so no binding can name it")
	}
	sa := *rc.Spec.ServiceAccountTemplate.Metadata.Name
	var args []string
	if dt := rc.Spec.DeploymentTemplate; dt != nil && dt.Spec != nil {
		for _, c := range dt.Spec.Template.Spec.Containers {
			if c.Name == "package-runtime" {
				args = c.Args
			}
		}
	}
	if !slices.Contains(args, "--enable-server-side-apply") {
		t.Errorf("package-runtime args %q lack --enable-server-side-apply: the provider would apply manifests client-side and own every field it sends", args)
	}

	crb := &rbacv1.ClusterRoleBinding{}
	if err := yaml.UnmarshalStrict(docs["ClusterRoleBinding/provider-kubernetes:firebolt:statefulsets"], crb); err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: "crossplane-system"}}
	if !slices.Equal(crb.Subjects, want) {
		t.Errorf("ClusterRoleBinding subjects %+v, want %+v", crb.Subjects, want)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(docs["ClusterRole/"+crb.RoleRef.Name], role); err != nil {
		t.Fatalf("ClusterRole %s: %v", crb.RoleRef.Name, err)
	}
	granted := map[string]bool{}
	for _, r := range role.Rules {
		if slices.Contains(r.APIGroups, "apps") && slices.Contains(r.Resources, "statefulsets") {
			for _, v := range r.Verbs {
				granted[v] = true
			}
		}
	}
	for _, v := range []string{"get", "patch"} {
		if !granted[v] {
			t.Errorf("ClusterRole %s does not grant %s on apps/statefulsets", role.Name, v)
		}
	}
	for _, v := range []string{"create", "delete", "update", "*"} {
		if granted[v] {
			t.Errorf("ClusterRole %s grants %s on apps/statefulsets; an Object's management policies need only get and patch", role.Name, v)
		}
	}
}

// What a user applies once the provider is installed: the ProviderConfig
// every composed Object names, using the provider pod's own identity.
func TestProviderConfigDefault(t *testing.T) {
	raw := readDocs(t, "../../deploy/post-install/provider-kubernetes-config.yaml")["ProviderConfig/default"]
	var pc struct {
		APIVersion string `json:"apiVersion"`
		Spec       struct {
			Credentials struct {
				Source string `json:"source"`
			} `json:"credentials"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &pc); err != nil || raw == nil {
		t.Fatalf("no ProviderConfig default in deploy/post-install (%v)", err)
	}
	if pc.APIVersion != "kubernetes.crossplane.io/v1alpha1" || pc.Spec.Credentials.Source != "InjectedIdentity" {
		t.Errorf("ProviderConfig default is %s with credentials %q, want kubernetes.crossplane.io/v1alpha1 with InjectedIdentity", pc.APIVersion, pc.Spec.Credentials.Source)
	}
}

// Crossplane manages the cert-manager Certificates the instance composes and
// reads the CertificateRequests cert-manager makes for them (the function
// requires them), through the ClusterRole its own ClusterRole aggregates:
// cert-manager is no Crossplane package, so nothing else grants its kinds.
func TestRBACGrantsCertManagerKinds(t *testing.T) {
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(readDocs(t, "../../deploy/rbac.yaml")["ClusterRole/crossplane:firebolt:composed-resources"], role); err != nil {
		t.Fatal(err)
	}
	if role.Labels["rbac.crossplane.io/aggregate-to-crossplane"] != "true" {
		t.Fatalf("ClusterRole %s lacks the aggregate-to-crossplane label: Crossplane's ClusterRole would not aggregate it", role.Name)
	}
	granted := func(resource string) map[string]bool {
		verbs := map[string]bool{}
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, "cert-manager.io") && slices.Contains(r.Resources, resource) {
				for _, v := range r.Verbs {
					verbs[v] = true
				}
			}
		}
		return verbs
	}
	certs, reqs := granted("certificates"), granted("certificaterequests")
	for _, v := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
		if !certs[v] {
			t.Errorf("ClusterRole %s does not grant %s on cert-manager.io/certificates", role.Name, v)
		}
	}
	for _, v := range []string{"get", "list", "watch"} {
		if !reqs[v] {
			t.Errorf("ClusterRole %s does not grant %s on cert-manager.io/certificaterequests", role.Name, v)
		}
	}
	for _, v := range []string{"create", "update", "patch", "delete", "*"} {
		if reqs[v] {
			t.Errorf("ClusterRole %s grants %s on cert-manager.io/certificaterequests; the function only reads them", role.Name, v)
		}
	}
}

// The function exports the state metrics as the service account
// deploy/function-runtime.yaml gives it: it may list and watch the
// composites the series read and the engines' StatefulSets, and hold the
// Lease of its default name in its own namespace, which the runtime config
// hands it as POD_NAMESPACE. Nothing more: it writes nothing else.
func TestFunctionStateMetricsAccess(t *testing.T) {
	docs := readDocs(t, "../../deploy/function-runtime.yaml")
	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: "function-firebolt", Namespace: "crossplane-system"}

	crb := &rbacv1.ClusterRoleBinding{}
	if err := yaml.UnmarshalStrict(docs["ClusterRoleBinding/function-firebolt:state-metrics"], crb); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(crb.Subjects, []rbacv1.Subject{sa}) {
		t.Errorf("ClusterRoleBinding subjects %+v, want the function's service account", crb.Subjects)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(docs["ClusterRole/"+crb.RoleRef.Name], role); err != nil {
		t.Fatal(err)
	}
	wantRules := []rbacv1.PolicyRule{
		{APIGroups: []string{"compute.firebolt.io"}, Resources: []string{statemetrics.EnginesResource.Resource, statemetrics.InstancesResource.Resource}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"list", "watch"}},
	}
	if diff := cmp.Diff(wantRules, role.Rules); diff != "" {
		t.Errorf("ClusterRole %s (-want +got):\n%s", role.Name, diff)
	}

	rb := &rbacv1.RoleBinding{}
	if err := yaml.UnmarshalStrict(docs["RoleBinding/function-firebolt:state-metrics-lease"], rb); err != nil {
		t.Fatal(err)
	}
	if rb.Namespace != sa.Namespace || !slices.Equal(rb.Subjects, []rbacv1.Subject{sa}) || rb.RoleRef.Kind != "Role" {
		t.Errorf("RoleBinding %s/%s binds %s %s to %+v, want a Role in crossplane-system bound to the function's service account", rb.Namespace, rb.Name, rb.RoleRef.Kind, rb.RoleRef.Name, rb.Subjects)
	}
	lease := &rbacv1.Role{}
	if err := yaml.UnmarshalStrict(docs["Role/"+rb.RoleRef.Name], lease); err != nil {
		t.Fatal(err)
	}
	wantLease := []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{statemetrics.DefaultLeaseName}, Verbs: []string{"get", "update"}},
	}
	if diff := cmp.Diff(wantLease, lease.Rules); diff != "" || lease.Namespace != sa.Namespace {
		t.Errorf("Role %s/%s (-want +got):\n%s", lease.Namespace, lease.Name, diff)
	}

	rc := &pkgv1beta1.DeploymentRuntimeConfig{}
	if err := yaml.UnmarshalStrict(docs["DeploymentRuntimeConfig/function-firebolt"], rc); err != nil {
		t.Fatal(err)
	}
	var env []corev1.EnvVar
	for _, c := range rc.Spec.DeploymentTemplate.Spec.Template.Spec.Containers {
		if c.Name == "package-runtime" {
			env = c.Env
		}
	}
	want := []corev1.EnvVar{{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("package-runtime env (-want +got):\n%s", diff)
	}
}
