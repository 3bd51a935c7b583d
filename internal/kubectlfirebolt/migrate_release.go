package kubectlfirebolt

import (
	"encoding/json"
	"fmt"
	"strings"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// releaseResources are the kinds of object the original makes (its
// instance's deletion sweep and its engines' garbage collector list the
// same). They are read through the metadata client only: a Secret's data
// never reaches the plugin.
var releaseResources = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "persistentvolumeclaims"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	{Group: "cert-manager.io", Version: "v1", Resource: "certificates"},
}

// Marks of the original on what it made.
const (
	// originalFinalizerPrefix: the original's finalizers
	// (compute.firebolt.io/engine-cleanup, …).
	originalFinalizerPrefix = originalGroup + "/"
	// originalFieldManager: the original server-side applies as this.
	originalFieldManager = "firebolt-operator"
)

// releaseAttempts bounds the retries of one object's release when another
// writer changes it between the read and the patch.
const releaseAttempts = 5

// held is what ties one object to the original, and what it needs to be
// taken over.
type held struct {
	owners     []metav1.OwnerReference
	finalizers []string
	managers   int
	// stamp is the composition resource name to stamp on an object the
	// function adopts (contract.AdoptedNames); "" when it has it already
	// or is not adopted.
	stamp     string
	annotated bool
	// keep* are what the object keeps.
	keepOwners     []metav1.OwnerReference
	keepFinalizers []string
	keepManaged    []metav1.ManagedFieldsEntry
}

// any: the object is tied to the original by an owner reference or a
// finalizer. Its field manager's entries alone tie it to nothing: an
// object without either is not written (the original's entries go with
// the others of an object that is).
func (h held) any() bool { return len(h.owners)+len(h.finalizers) > 0 || h.stamp != "" }

// String says what is taken off.
func (h held) String() string {
	var parts []string
	for _, o := range h.owners {
		parts = append(parts, fmt.Sprintf("ownerReference %s/%s", o.Kind, o.Name))
	}
	for _, f := range h.finalizers {
		parts = append(parts, "finalizer "+f)
	}
	if h.managers > 0 {
		parts = append(parts, "managedFields of "+originalFieldManager)
	}
	out := strings.Join(parts, ", ")
	if h.stamp != "" {
		if out != "" {
			out = "take " + out + " off, and stamp " + contract.AnnotationCompositionResourceName + "=" + h.stamp + " on"
		} else {
			out = "stamp " + contract.AnnotationCompositionResourceName + "=" + h.stamp + " on"
		}
		return out
	}
	return "take " + out + " off"
}

// holds is what of obj ties it to the original's objects uids, and the
// composition resource name to stamp on it (stamp, "" for none).
func holds(obj *metav1.PartialObjectMetadata, uids map[types.UID]bool, stamp string) held {
	h := held{annotated: obj.Annotations != nil}
	if stamp != "" && obj.Annotations[contract.AnnotationCompositionResourceName] != stamp {
		h.stamp = stamp
	}
	for _, o := range obj.OwnerReferences {
		if uids[o.UID] && groupOf(o.APIVersion) == originalGroup {
			h.owners = append(h.owners, o)
			continue
		}
		h.keepOwners = append(h.keepOwners, o)
	}
	for _, f := range obj.Finalizers {
		if strings.HasPrefix(f, originalFinalizerPrefix) {
			h.finalizers = append(h.finalizers, f)
			continue
		}
		h.keepFinalizers = append(h.keepFinalizers, f)
	}
	for _, mf := range obj.ManagedFields {
		if mf.Manager == originalFieldManager {
			h.managers++
			continue
		}
		h.keepManaged = append(h.keepManaged, mf)
	}
	return h
}

func groupOf(apiVersion string) string {
	g, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// jsonPatch is an RFC 6902 operation.
type jsonPatch struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// releasePatch takes h off an object at resourceVersion rv: the test
// makes the patch fail if anything changed the object since it was read.
func releasePatch(rv string, h held) ([]byte, error) {
	ops := []jsonPatch{{Op: "test", Path: "/metadata/resourceVersion", Value: rv}}
	if len(h.owners) > 0 {
		ops = append(ops, replaceOrRemove("/metadata/ownerReferences", h.keepOwners, len(h.keepOwners)))
	}
	if len(h.finalizers) > 0 {
		ops = append(ops, replaceOrRemove("/metadata/finalizers", h.keepFinalizers, len(h.keepFinalizers)))
	}
	if h.managers > 0 {
		// An empty list tells the API server to reset managedFields; it
		// then records this patch's own manager alone.
		keep := h.keepManaged
		if keep == nil {
			keep = []metav1.ManagedFieldsEntry{}
		}
		ops = append(ops, jsonPatch{Op: "replace", Path: "/metadata/managedFields", Value: keep})
	}
	switch {
	case h.stamp == "":
	case h.annotated:
		ops = append(ops, jsonPatch{Op: "add", Path: "/metadata/annotations/" + jsonPointerEscape(contract.AnnotationCompositionResourceName), Value: h.stamp})
	default:
		ops = append(ops, jsonPatch{Op: "add", Path: "/metadata/annotations", Value: map[string]string{contract.AnnotationCompositionResourceName: h.stamp}})
	}
	return json.Marshal(ops)
}

// jsonPointerEscape escapes a key for a JSON pointer (RFC 6901).
func jsonPointerEscape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

func replaceOrRemove(path string, keep any, n int) jsonPatch {
	if n == 0 {
		return jsonPatch{Op: "remove", Path: path}
	}
	return jsonPatch{Op: "replace", Path: path, Value: keep}
}

// release is step 4: every owner reference to the original's custom
// resources, its finalizers and its field manager taken off what it made,
// so that deleting them deletes nothing else.
func (m *migration) release() error {
	uids, stamps := m.saved.uids(), m.saved.adoptedNames()
	n := 0
	for _, ns := range m.saved.namespaces() {
		for _, r := range releaseResources {
			released, err := m.releaseIn(r, ns, uids, stamps[ns])
			if err != nil {
				return err
			}
			n += released
		}
	}
	if m.cmd.DryRun {
		m.printf("  %d objects to release\n", n)
		return nil
	}
	m.printf("  %d objects released\n", n)
	return nil
}

// releaseIn releases what of resource r in namespace ns the original
// holds, and returns how many objects that was.
func (m *migration) releaseIn(r schema.GroupVersionResource, ns string, uids map[types.UID]bool, stamps contract.AdoptedNames) (int, error) {
	n := 0
	err := m.scan(r, ns, func(obj *metav1.PartialObjectMetadata) error {
		released, err := m.releaseOne(r, obj, uids, stamps[r.Resource+"/"+obj.Name])
		if released {
			n++
		}
		return err
	})
	return n, err
}

// scan calls visit with every object of resource r in namespace ns, page
// by page, through the metadata client. cert-manager's Certificates are
// skipped where cert-manager is not installed: the original made none.
func (m *migration) scan(r schema.GroupVersionResource, ns string, visit func(*metav1.PartialObjectMetadata) error) error {
	ri := m.c.Metadata.Resource(r).Namespace(ns)
	opts := metav1.ListOptions{Limit: listPageSize}
	for seen := 0; ; {
		l, err := ri.List(m.ctx, opts)
		switch {
		case kerrors.IsNotFound(err) && r.Group == "cert-manager.io":
			return nil
		case err != nil:
			return errors.Wrapf(err, "cannot list %s in namespace %q", r.Resource, ns)
		}
		if seen += len(l.Items); seen > listMaxItems {
			return errors.Errorf("more than %d %s in namespace %q", listMaxItems, r.Resource, ns)
		}
		for i := range l.Items {
			if err := visit(&l.Items[i]); err != nil {
				return err
			}
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return nil
		}
	}
}

// releaseOne releases one object, reading it again when another writer
// got in between.
func (m *migration) releaseOne(r schema.GroupVersionResource, obj *metav1.PartialObjectMetadata, uids map[types.UID]bool, stamp string) (bool, error) {
	ri := m.c.Metadata.Resource(r).Namespace(obj.Namespace)
	what := fmt.Sprintf("%s %s/%s", singular(r), obj.Namespace, obj.Name)
	for attempt := 1; ; attempt++ {
		h := holds(obj, uids, stamp)
		if !h.any() {
			return false, nil
		}
		if attempt == 1 {
			m.would("%s %s", h, what)
		}
		if m.cmd.DryRun {
			return true, nil
		}
		patch, err := releasePatch(obj.ResourceVersion, h)
		if err != nil {
			return false, errors.Wrapf(err, "cannot encode the release of %s", what)
		}
		_, err = ri.Patch(m.ctx, obj.Name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		switch {
		case err == nil:
			return true, nil
		case kerrors.IsNotFound(err):
			return false, nil
		case attempt == releaseAttempts:
			return false, errors.Wrapf(err, "cannot release %s after %d attempts", what, attempt)
		}
		// The test failed (another writer) or the write did: read again.
		fresh, gerr := ri.Get(m.ctx, obj.Name, metav1.GetOptions{})
		if kerrors.IsNotFound(gerr) {
			return false, nil
		}
		if gerr != nil {
			return false, errors.Wrapf(gerr, "cannot release %s: %v; cannot read it again", what, err)
		}
		obj = fresh
	}
}

// singular names one object of r as kubectl does (statefulset, secret).
func singular(r schema.GroupVersionResource) string { return strings.TrimSuffix(r.Resource, "s") }
