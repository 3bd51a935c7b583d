package harness

import (
	"context"
	"fmt"
	"strings"

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
	for _, q := range [][]string{
		{"get", "-n", namespace, "statefulsets,controllerrevisions,deployments,services,configmaps,secrets,pods,pvc,poddisruptionbudgets,serviceaccounts,roles,rolebindings,usages.protection.crossplane.io,certificates.cert-manager.io,certificaterequests.cert-manager.io", "-o", "wide", "--show-labels"},
		{"get", "-n", namespace, "events", "--sort-by=.lastTimestamp"},
		{"get", "functions,functionrevisions,configurations,configurationrevisions"},
	} {
		section("kubectl " + strings.Join(q, " "))
		out, err := c.Kubectl(ctx, q...)
		b.WriteString(out)
		if err != nil {
			b.WriteString(err.Error() + "\n")
		}
	}
	if c.Pods != nil {
		section("fake engine pods")
		b.WriteString(c.Pods.Describe(namespace) + "\n")
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
