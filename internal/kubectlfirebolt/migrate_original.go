package kubectlfirebolt

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// crdResource is where CustomResourceDefinitions are served.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// originalGroup is the API group the original and this product share.
const originalGroup = "compute.firebolt.io"

// originalKind is one of the original's kinds: its CRD and resource. This
// product's claims are served under the same names by CRDs its XRDs own.
type originalKind struct {
	kind string
	crd  string
	res  schema.GroupVersionResource
}

// originalKinds in the order claims are applied: an engine needs its
// class and instance. They are deleted in the reverse order.
var originalKinds = []originalKind{
	{kind: v1alpha1.FireboltEngineClassKind, crd: "fireboltengineclasses." + originalGroup, res: classResource},
	{kind: v1alpha1.FireboltInstanceKind, crd: "fireboltinstances." + originalGroup, res: instanceResource},
	{kind: v1alpha1.FireboltEngineKind, crd: "fireboltengines." + originalGroup, res: engineResource},
}

func kindOf(kind string) (originalKind, bool) {
	for _, k := range originalKinds {
		if k.kind == kind {
			return k, true
		}
	}
	return originalKind{}, false
}

// crdState is who serves one of the kinds.
type crdState int

const (
	crdAbsent crdState = iota
	// crdOriginal: a CRD no Crossplane XRD owns, the original's.
	crdOriginal
	// crdOurs: the claim CRD of this product's XRD.
	crdOurs
)

// crdOf reads the CRD of k: who owns it, and whether it is Established.
func (m *migration) crdOf(k originalKind) (crdState, bool, error) {
	u, err := m.c.Dynamic.Resource(crdResource).Get(m.ctx, k.crd, metav1.GetOptions{})
	switch {
	case kerrors.IsNotFound(err):
		return crdAbsent, false, nil
	case err != nil:
		return crdAbsent, false, errors.Wrapf(err, "cannot get customresourcedefinition %s", k.crd)
	}
	established := false
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["type"] == "Established" && cm["status"] == "True" {
			established = true
		}
	}
	for _, o := range u.GetOwnerReferences() {
		if o.Kind == "CompositeResourceDefinition" && strings.HasPrefix(o.APIVersion, "apiextensions.crossplane.io/") {
			return crdOurs, established, nil
		}
	}
	return crdOriginal, established, nil
}

// originals are custom resources of the original, each with its kind.
type originals []original

type original struct {
	kind originalKind
	obj  *unstructured.Unstructured
}

func (o original) key() string {
	return o.obj.GetNamespace() + "/" + o.kind.kind + "/" + o.obj.GetName()
}

// String names the object as kubectl does, with its namespace.
func (o original) String() string {
	return fmt.Sprintf("%s %s/%s", strings.ToLower(o.kind.kind), o.obj.GetNamespace(), o.obj.GetName())
}

// sorted orders originals by kind (classes, instances, engines), then
// namespace and name.
func (os originals) sorted() originals {
	rank := map[string]int{}
	for i, k := range originalKinds {
		rank[k.kind] = i
	}
	out := append(originals(nil), os...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.kind.kind != b.kind.kind {
			return rank[a.kind.kind] < rank[b.kind.kind]
		}
		if a.obj.GetNamespace() != b.obj.GetNamespace() {
			return a.obj.GetNamespace() < b.obj.GetNamespace()
		}
		return a.obj.GetName() < b.obj.GetName()
	})
	return out
}

// merge is os with newer replacing what it holds of the same object.
func (os originals) merge(newer originals) originals {
	at := map[string]int{}
	out := append(originals(nil), os...)
	for i, o := range out {
		at[o.key()] = i
	}
	for _, o := range newer {
		if i, ok := at[o.key()]; ok {
			out[i] = o
			continue
		}
		at[o.key()] = len(out)
		out = append(out, o)
	}
	return out.sorted()
}

// uids are the UIDs of os: what owner references to the original name.
func (os originals) uids() map[types.UID]bool {
	out := make(map[types.UID]bool, len(os))
	for _, o := range os {
		out[o.obj.GetUID()] = true
	}
	return out
}

// adoptedNames are, by namespace, the composition resource names to stamp
// on the original's objects that the claims made from os take over: an
// instance's components, and each engine's serving generation and routing
// Service.
func (os originals) adoptedNames() map[string]contract.AdoptedNames {
	out := map[string]contract.AdoptedNames{}
	for _, o := range os {
		ns := o.obj.GetNamespace()
		if out[ns] == nil {
			out[ns] = contract.AdoptedNames{}
		}
		var names contract.AdoptedNames
		switch o.kind.kind {
		case v1alpha1.FireboltInstanceKind:
			names = contract.InstanceAdoptedNames(o.obj.GetName())
		case v1alpha1.FireboltEngineKind:
			if g, ok, _ := unstructured.NestedInt64(o.obj.Object, "status", "activeGeneration"); ok && g >= 0 {
				names = contract.EngineAdoptedNames(o.obj.GetName(), int(g))
			}
		}
		for k, v := range names {
			out[ns][k] = v
		}
	}
	return out
}

// namespaces are the namespaces os lives in, sorted.
func (os originals) namespaces() []string {
	seen := map[string]bool{}
	var out []string
	for _, o := range os {
		if ns := o.obj.GetNamespace(); !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out
}

// listLive lists what the original serves in scope: nothing of a kind
// whose CRD is gone or already this product's.
func (m *migration) listLive() (originals, error) {
	var out originals
	for _, k := range originalKinds {
		st, _, err := m.crdOf(k)
		if err != nil {
			return nil, err
		}
		if st != crdOriginal {
			continue
		}
		items, err := listPages(m.ctx, m.resource(k.res, m.scope), k.res.Resource, m.scopeName())
		if err != nil {
			return nil, err
		}
		for i := range items {
			out = append(out, original{kind: k, obj: &items[i]})
		}
	}
	return out.sorted(), nil
}

// resource is the dynamic client of r in namespace ns ("" is all).
func (m *migration) resource(r schema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	if ns == "" {
		return m.c.Dynamic.Resource(r)
	}
	return m.c.Dynamic.Resource(r).Namespace(ns)
}

// refusal says why an original cannot be migrated now; "" when it can.
// The original changes nothing while an engine rests (stable, stopped)
// and its instance is Ready, so those are the states adopted.
func refusal(o original) string {
	if o.obj.GetDeletionTimestamp() != nil {
		return fmt.Sprintf("%s is being deleted; let the original finish (or cancel it) first", o)
	}
	phase, _, _ := unstructured.NestedString(o.obj.Object, "status", "phase")
	switch o.kind.kind {
	case v1alpha1.FireboltEngineKind:
		if phase != "stable" && phase != "stopped" {
			return fmt.Sprintf("%s is in phase %q, mid-rollout; wait until it is stable or stopped", o, phase)
		}
	case v1alpha1.FireboltInstanceKind:
		if phase != "Ready" {
			return fmt.Sprintf("%s is in phase %q, not Ready; fix it (kubectl describe) or wait", o, phase)
		}
	}
	return ""
}

// refuse is every refusal of os, one per line.
func refuse(os originals) error {
	var msgs []string
	for _, o := range os {
		if r := refusal(o); r != "" {
			msgs = append(msgs, r)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.Errorf("the original is not at rest; nothing was changed:\n  %s", strings.Join(msgs, "\n  "))
}

// check is step 1: what the original serves and the backup holds in
// scope, and whether it is at rest.
func (m *migration) check() error {
	for _, k := range originalKinds {
		st, established, err := m.crdOf(k)
		if err != nil {
			return err
		}
		m.printf("  customresourcedefinition %s: %s\n", k.crd, describeCRD(st, established))
	}
	live, err := m.listLive()
	if err != nil {
		return err
	}
	saved, err := readBackup(m.cmd.BackupDir, m.scope)
	if err != nil {
		return err
	}
	m.live, m.saved = live, saved
	if len(live) == 0 && len(saved) == 0 {
		return errors.Errorf("nothing to migrate in %s: the original serves no FireboltEngineClass, FireboltInstance or FireboltEngine there and %s holds none", m.scopeName(), m.cmd.BackupDir)
	}
	m.printf("  %d of the original's custom resources live in %s; %d saved in %s\n", len(live), m.scopeName(), len(saved), m.cmd.BackupDir)
	return refuse(live)
}

func describeCRD(st crdState, established bool) string {
	switch st {
	case crdAbsent:
		return "absent"
	case crdOriginal:
		return "the original's"
	case crdOurs:
		if established {
			return "this product's (established)"
		}
		return "this product's (not established yet)"
	}
	return "absent"
}

// Polling bounds of waitUntil.
var (
	waitFirstPoll = 100 * time.Millisecond
	waitMaxPoll   = 2 * time.Second
)

// waitUntil polls done until it reports true or timeout passes. A failed
// read is retried (one read says little), and the last error is told if
// time runs out.
func waitUntil(ctx context.Context, timeout time.Duration, what string, done func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	poll := waitFirstPoll
	var last error
	for {
		ok, err := done(ctx)
		switch {
		case err == nil && ok:
			return nil
		case err != nil:
			last = err
		}
		if ctx.Err() != nil {
			if last != nil {
				return errors.Wrapf(last, "%s: not done after %s", what, timeout)
			}
			return errors.Errorf("%s: not done after %s", what, timeout)
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		poll = min(2*poll, waitMaxPoll)
	}
}
