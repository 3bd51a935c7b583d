package kubectlfirebolt

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// deleteOriginals is step 5: the original's custom resources in scope
// deleted (their finalizers taken off first, since the operator that would
// remove them is stopped), then each CRD that serves nothing any more.
func (m *migration) deleteOriginals() error {
	live, err := m.listLive()
	if err != nil {
		return err
	}
	if err := m.verifyReleased(); err != nil {
		return err
	}
	// Engines first: while the original ran, an engine needed its
	// instance and class.
	for i := len(live) - 1; i >= 0; i-- {
		if err := m.deleteOriginal(live[i]); err != nil {
			return err
		}
	}
	for _, k := range originalKinds {
		if err := m.deleteCRD(k); err != nil {
			return err
		}
	}
	return nil
}

// verifyReleased refuses to delete anything while an object still holds
// an owner reference to the original: Kubernetes would delete it.
func (m *migration) verifyReleased() error {
	if m.cmd.DryRun {
		return nil
	}
	uids := m.saved.uids()
	for _, ns := range m.saved.namespaces() {
		for _, r := range releaseResources {
			err := m.scan(r, ns, func(obj *metav1.PartialObjectMetadata) error {
				if h := holds(obj, uids, ""); len(h.owners) > 0 {
					return errors.Errorf("%s %s/%s still holds %s: not deleting the original's custom resources; run again",
						singular(r), ns, obj.Name, h)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteOriginal deletes one custom resource of the original, and waits
// until it is gone.
func (m *migration) deleteOriginal(o original) error {
	ri := m.resource(o.kind.res, o.obj.GetNamespace())
	name := o.obj.GetName()
	m.would("delete %s", o)
	if m.cmd.DryRun {
		return nil
	}
	var keep []string
	for _, f := range o.obj.GetFinalizers() {
		if !strings.HasPrefix(f, originalFinalizerPrefix) {
			keep = append(keep, f)
		}
	}
	if len(keep) != len(o.obj.GetFinalizers()) {
		patch, err := json.Marshal([]jsonPatch{
			{Op: "test", Path: "/metadata/resourceVersion", Value: o.obj.GetResourceVersion()},
			replaceOrRemove("/metadata/finalizers", keep, len(keep)),
		})
		if err != nil {
			return errors.Wrapf(err, "cannot encode the finalizers of %s", o)
		}
		if _, err := ri.Patch(m.ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); err != nil && !kerrors.IsNotFound(err) {
			return errors.Wrapf(err, "cannot take the original's finalizers off %s", o)
		}
	}
	err := ri.Delete(m.ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(o.obj.GetUID())}})
	if err != nil && !kerrors.IsNotFound(err) {
		return errors.Wrapf(err, "cannot delete %s", o)
	}
	return waitUntil(m.ctx, m.cmd.Timeout, fmt.Sprintf("%s going", o), func(ctx context.Context) (bool, error) {
		u, err := ri.Get(ctx, name, metav1.GetOptions{})
		if kerrors.IsNotFound(err) || (err == nil && u.GetUID() != o.obj.GetUID()) {
			return true, nil
		}
		return false, err
	})
}

// deleteCRD deletes k's CRD when it is the original's and serves nothing
// in any namespace; objects left elsewhere keep it, and step 6 says so.
func (m *migration) deleteCRD(k originalKind) error {
	st, _, err := m.crdOf(k)
	if err != nil || st != crdOriginal {
		return err
	}
	left, err := m.servedElsewhere(k)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		m.printf("  keeping customresourcedefinition %s: it serves %s\n", k.crd, strings.Join(left, ", "))
		return nil
	}
	m.would("delete customresourcedefinition %s", k.crd)
	if m.cmd.DryRun {
		return nil
	}
	ri := m.c.Dynamic.Resource(crdResource)
	if err := ri.Delete(m.ctx, k.crd, metav1.DeleteOptions{}); err != nil && !kerrors.IsNotFound(err) {
		return errors.Wrapf(err, "cannot delete customresourcedefinition %s", k.crd)
	}
	return waitUntil(m.ctx, m.cmd.Timeout, "customresourcedefinition "+k.crd+" going", func(context.Context) (bool, error) {
		st, _, err := m.crdOf(k)
		return st != crdOriginal, err
	})
}

// servedElsewhere names what k's CRD still serves outside what this run
// deletes, by namespace ("3 in team-a").
func (m *migration) servedElsewhere(k originalKind) ([]string, error) {
	items, err := listPages(m.ctx, m.c.Dynamic.Resource(k.res), k.res.Resource, "every namespace")
	if err != nil {
		return nil, err
	}
	byNS := map[string]int{}
	for _, u := range items {
		if m.cmd.DryRun && (m.scope == "" || u.GetNamespace() == m.scope) {
			// A dry run deleted nothing; what it would delete is not left.
			continue
		}
		byNS[u.GetNamespace()]++
	}
	out := make([]string, 0, len(byNS))
	for ns, n := range byNS {
		out = append(out, fmt.Sprintf("%d %s in namespace %s", n, k.res.Resource, ns))
	}
	sort.Strings(out)
	return out, nil
}

// waitForXRDs is step 6: this product installs its CRDs through the
// Configuration's XRDs; the migration installs nothing and waits for them.
func (m *migration) waitForXRDs() error {
	var missing []originalKind
	for _, k := range originalKinds {
		st, established, err := m.crdOf(k)
		if err != nil {
			return err
		}
		switch {
		case st == crdOriginal && !m.cmd.DryRun:
			left, err := m.servedElsewhere(k)
			if err != nil {
				return err
			}
			return errors.Errorf("customresourcedefinition %s is still the original's (it serves %s): "+
				"this product's XRD cannot serve it until that is migrated too; run again with -n for those namespaces, or -A",
				k.crd, strings.Join(left, ", "))
		case st == crdOurs && established:
			m.printf("  customresourcedefinition %s: this product's, established\n", k.crd)
		default:
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	names := make([]string, len(missing))
	for i, k := range missing {
		names[i] = k.crd
	}
	m.would("wait up to %s for this product's XRDs to serve %s: install the Configuration package now if it is not (docs/install.md)",
		m.cmd.Timeout, strings.Join(names, ", "))
	if m.cmd.DryRun {
		return nil
	}
	return waitUntil(m.ctx, m.cmd.Timeout, "this product's XRDs serving "+strings.Join(names, ", "), func(context.Context) (bool, error) {
		for _, k := range missing {
			st, established, err := m.crdOf(k)
			if err != nil || st != crdOurs || !established {
				return false, err
			}
		}
		return true, nil
	})
}

// claimOf is the claim that takes o's place: its spec as it was, its
// labels and annotations, and what the function adopts by. An engine
// carries the generation that served (the function records the live
// objects as that generation's rendering instead of rendering its own);
// an instance's spec.id is the original's, so its account id stays.
func claimOf(o original) *unstructured.Unstructured {
	c := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": o.obj.GetAPIVersion(),
		"kind":       o.obj.GetKind(),
		"spec":       o.obj.Object["spec"],
	}}
	c.SetName(o.obj.GetName())
	c.SetNamespace(o.obj.GetNamespace())
	if l := o.obj.GetLabels(); len(l) > 0 {
		c.SetLabels(l)
	}
	ann := map[string]string{}
	for k, v := range o.obj.GetAnnotations() {
		if k != "kubectl.kubernetes.io/last-applied-configuration" {
			ann[k] = v
		}
	}
	ann[contract.AnnotationMigratedFrom] = contract.MigratedFromOriginal
	if o.kind.kind == v1alpha1.FireboltEngineKind {
		if g, ok, _ := unstructured.NestedInt64(o.obj.Object, "status", "activeGeneration"); ok && g >= 0 {
			ann[contract.AnnotationAdoptGeneration] = strconv.FormatInt(g, 10)
		}
	}
	c.SetAnnotations(ann)
	return c
}

// applyClaims is step 7: every saved custom resource in scope applied as
// a claim of this product, server-side, with the schema's strict field
// validation, classes and instances before engines. A claim of the same
// name that no migration made is left alone and reported.
func (m *migration) applyClaims() error {
	var failed []string
	for _, o := range m.saved {
		c := claimOf(o)
		adopt := ""
		if g, ok := c.GetAnnotations()[contract.AnnotationAdoptGeneration]; ok {
			adopt = ", adopting generation " + g
		}
		m.would("apply %s as a claim%s", o, adopt)
		if m.cmd.DryRun {
			continue
		}
		if err := m.applyClaim(o, c); err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 {
		return errors.Errorf("%d of %d claims not applied (the rest are; fix these and run again):\n  %s",
			len(failed), len(m.saved), strings.Join(failed, "\n  "))
	}
	return nil
}

func (m *migration) applyClaim(o original, c *unstructured.Unstructured) error {
	ri := m.resource(o.kind.res, o.obj.GetNamespace())
	cur, err := ri.Get(m.ctx, c.GetName(), metav1.GetOptions{})
	switch {
	case err == nil && cur.GetAnnotations()[contract.AnnotationMigratedFrom] == "":
		return errors.Errorf("%s: a claim of that name exists and no migration made it; not touching it", o)
	case err != nil && !kerrors.IsNotFound(err):
		return errors.Wrapf(err, "cannot get %s", o)
	}
	body, err := json.Marshal(c.Object)
	if err != nil {
		return errors.Wrapf(err, "cannot encode %s", o)
	}
	_, err = ri.Patch(m.ctx, c.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		FieldManager:    FieldManager,
		FieldValidation: metav1.FieldValidationStrict,
	})
	return errors.Wrapf(err, "cannot apply %s", o)
}
