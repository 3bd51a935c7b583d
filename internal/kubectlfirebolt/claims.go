package kubectlfirebolt

import (
	"context"
	"encoding/json"
	"fmt"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Condition is one condition of a claim, as Crossplane writes them: its
// own (Ready, Synced) and the function's (EngineReady, InstanceReady, …).
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// conditions is a claim's status.conditions.
type conditions []Condition

// get returns the condition of type t, and whether there is one.
func (cs conditions) get(t string) (Condition, bool) {
	for _, c := range cs {
		if c.Type == t {
			return c, true
		}
	}
	return Condition{}, false
}

// ready is the READY column: the Ready condition's status, "-" without one.
func (cs conditions) ready() string {
	if c, ok := cs.get("Ready"); ok {
		return c.Status
	}
	return "-"
}

// engineClaim is a FireboltEngine claim, typed.
type engineClaim struct {
	Metadata metav1.ObjectMeta           `json:"metadata"`
	Spec     v1alpha1.FireboltEngineSpec `json:"spec"`
	Status   struct {
		v1alpha1.FireboltEngineStatus
		Conditions conditions `json:"conditions,omitempty"`
	} `json:"status"`
}

// instanceClaim is a FireboltInstance claim, typed.
type instanceClaim struct {
	Metadata metav1.ObjectMeta             `json:"metadata"`
	Spec     v1alpha1.FireboltInstanceSpec `json:"spec"`
	Status   struct {
		v1alpha1.FireboltInstanceStatus
		Conditions conditions `json:"conditions,omitempty"`
	} `json:"status"`
}

// decode reads an object the API server returned into a typed claim.
func decode(u *unstructured.Unstructured, into any) error {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return errors.Wrapf(err, "cannot encode %s %s", u.GetKind(), u.GetName())
	}
	return errors.Wrapf(json.Unmarshal(b, into), "cannot decode %s %s", u.GetKind(), u.GetName())
}

func readEngine(u *unstructured.Unstructured) (engineClaim, error) {
	var e engineClaim
	err := decode(u, &e)
	return e, err
}

func readInstance(u *unstructured.Unstructured) (instanceClaim, error) {
	var i instanceClaim
	err := decode(u, &i)
	return i, err
}

// getClaim reads one claim, with an error that names it when it is not
// there.
func getClaim(ctx context.Context, c Clients, r schema.GroupVersionResource, name string) (*unstructured.Unstructured, error) {
	u, err := c.Dynamic.Resource(r).Namespace(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	return u, notFound(err, r, name, c.Namespace)
}

// notFound words a NotFound error as kubectl does, naming the namespace;
// other errors are wrapped.
func notFound(err error, r schema.GroupVersionResource, name, ns string) error {
	switch {
	case err == nil:
		return nil
	case kerrors.IsNotFound(err):
		return errors.Errorf("%s %q not found in namespace %q", gvrName(r), name, ns)
	}
	return errors.Wrapf(err, "cannot get %s %q", gvrName(r), name)
}

// listPageSize bounds one list response; listMaxItems bounds what a list
// command holds in memory.
const (
	listPageSize = 500
	listMaxItems = 10000
)

// listClaims lists every claim of r in the namespace, page by page.
func listClaims(ctx context.Context, c Clients, r schema.GroupVersionResource) ([]unstructured.Unstructured, error) {
	return listPages(ctx, c.Dynamic.Resource(r).Namespace(c.Namespace), r.Resource, fmt.Sprintf("namespace %q", c.Namespace))
}

// listPages lists every object ri serves, page by page, holding at most
// listMaxItems; what and where name them in errors.
func listPages(ctx context.Context, ri dynamic.ResourceInterface, what, where string) ([]unstructured.Unstructured, error) {
	var items []unstructured.Unstructured
	opts := metav1.ListOptions{Limit: listPageSize}
	for {
		l, err := ri.List(ctx, opts)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot list %s in %s", what, where)
		}
		items = append(items, l.Items...)
		if len(items) > listMaxItems {
			return nil, errors.Errorf("more than %d %s in %s", listMaxItems, what, where)
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return items, nil
		}
	}
}
