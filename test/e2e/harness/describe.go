package harness

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Group and Version are the API group and version of the product's kinds.
const (
	Group   = v1alpha1.Group
	Version = "v1alpha1"
)

// Claim and composite kinds.
var (
	InstanceGVK   = v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.FireboltInstanceKind)
	EngineGVK     = v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.FireboltEngineKind)
	ClassGVK      = v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.FireboltEngineClassKind)
	XInstanceGVK  = v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.XFireboltInstanceKind)
	XEngineGVK    = v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.XFireboltEngineKind)
	XClassGVK     = v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.XFireboltEngineClassKind)
	PhasedGVK     = schema.GroupVersionKind{Group: v1alpha1.AppsGroup, Version: Version, Kind: v1alpha1.PhasedStatefulSetKind}
	XPhasedGVK    = schema.GroupVersionKind{Group: v1alpha1.AppsGroup, Version: Version, Kind: v1alpha1.XPhasedStatefulSetKind}
	claimAndXRGVK = []schema.GroupVersionKind{InstanceGVK, ClassGVK, EngineGVK, PhasedGVK, XInstanceGVK, XClassGVK, XEngineGVK, XPhasedGVK}
)

// Describe renders what a failed test in namespace needs to be understood:
// the claims and their composites in full, every object in the namespace
// with its labels, the events, the fake pods' rules and the packages.
func (c *Cluster) Describe(ctx context.Context, namespace string) string {
	var b strings.Builder
	section := func(title string) { fmt.Fprintf(&b, "\n----- %s\n", title) }
	for _, gvk := range claimAndXRGVK {
		ns := namespace
		opts := metav1.ListOptions{}
		if strings.HasPrefix(gvk.Kind, "X") {
			ns, opts.LabelSelector = "", "crossplane.io/claim-namespace="+namespace
		}
		ri, err := c.Resource(gvk, ns)
		if err != nil {
			section(gvk.Kind)
			b.WriteString(err.Error() + "\n")
			continue
		}
		l, err := ri.List(ctx, opts)
		if err != nil {
			section(gvk.Kind)
			b.WriteString(err.Error() + "\n")
			continue
		}
		if len(l.Items) == 0 {
			continue
		}
		section(fmt.Sprintf("%s (%d)", gvk.Kind, len(l.Items)))
		for i := range l.Items {
			b.WriteString(ToYAML(&l.Items[i]))
		}
	}
	// What kubectl get -o wide --show-labels would print for each kind.
	for _, q := range []struct {
		gvk schema.GroupVersionKind
		ns  string
	}{
		{appsv1.SchemeGroupVersion.WithKind("StatefulSet"), namespace},
		{appsv1.SchemeGroupVersion.WithKind("ControllerRevision"), namespace},
		{appsv1.SchemeGroupVersion.WithKind("Deployment"), namespace},
		{corev1.SchemeGroupVersion.WithKind("Service"), namespace},
		{corev1.SchemeGroupVersion.WithKind("ConfigMap"), namespace},
		{corev1.SchemeGroupVersion.WithKind("Secret"), namespace},
		{corev1.SchemeGroupVersion.WithKind("Pod"), namespace},
		{corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), namespace},
		{policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), namespace},
		{corev1.SchemeGroupVersion.WithKind("ServiceAccount"), namespace},
		{rbacv1.SchemeGroupVersion.WithKind("Role"), namespace},
		{rbacv1.SchemeGroupVersion.WithKind("RoleBinding"), namespace},
		{schema.GroupVersionKind{Group: "protection.crossplane.io", Version: "v1beta1", Kind: "Usage"}, namespace},
		{CertificateGVK, namespace},
		{CertificateRequestGVK, namespace},
		{FunctionGVK, ""},
		{FunctionRevisionGVK, ""},
		{ConfigurationGVK, ""},
		{schema.GroupVersionKind{Group: pkgGroup, Version: "v1", Kind: "ConfigurationRevision"}, ""},
	} {
		t, err := c.table(ctx, q.gvk, q.ns)
		if err != nil {
			section(q.gvk.Kind)
			b.WriteString(err.Error() + "\n")
			continue
		}
		if len(t.Rows) == 0 {
			continue
		}
		section(fmt.Sprintf("%s (%d)", q.gvk.Kind, len(t.Rows)))
		b.WriteString(tableText(t))
	}
	section("events")
	b.WriteString(c.events(ctx, namespace))
	if c.Pods != nil {
		section("fake engine pods")
		b.WriteString(c.Pods.Describe(namespace) + "\n")
	}
	return b.String()
}

// events are namespace's events, oldest first, one line each.
func (c *Cluster) events(ctx context.Context, namespace string) string {
	l, err := c.Kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error() + "\n"
	}
	last := func(e *corev1.Event) time.Time {
		if !e.LastTimestamp.IsZero() {
			return e.LastTimestamp.Time
		}
		return e.EventTime.Time
	}
	sort.SliceStable(l.Items, func(i, j int) bool { return last(&l.Items[i]).Before(last(&l.Items[j])) })
	var b strings.Builder
	for i := range l.Items {
		e := &l.Items[i]
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s/%s\tx%d\t%s\n", last(e).Format(time.RFC3339), e.Type, e.Reason,
			strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, e.Count, e.Message)
	}
	return b.String()
}

// CompositeNames lists the names of the composites of the claims in
// namespace, to pick their lines out of Crossplane's and the function's logs.
func (c *Cluster) CompositeNames(ctx context.Context, namespace string) []string {
	var names []string
	for _, gvk := range []schema.GroupVersionKind{XInstanceGVK, XClassGVK, XEngineGVK, XPhasedGVK} {
		ri, err := c.Resource(gvk, "")
		if err != nil {
			continue
		}
		l, err := ri.List(ctx, metav1.ListOptions{LabelSelector: "crossplane.io/claim-namespace=" + namespace})
		if err != nil {
			continue
		}
		for i := range l.Items {
			names = append(names, l.Items[i].GetName())
		}
	}
	return names
}
