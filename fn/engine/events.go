package engine

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/crossplane/function-sdk-go/errors"
)

// eventsListTimeout bounds the Warning events lookup. It is a diagnostic
// only, so a slow API server must cost a call little of Crossplane's
// two-minute budget: the condition then simply names no event.
const eventsListTimeout = 5 * time.Second

// eventsListLimit bounds how many events one lookup decodes; a StatefulSet
// stuck short of pods repeats the same few reasons, which the API server
// folds into counts.
const eventsListLimit = 100

// NewEventLister returns an EventLister that lists events with kube,
// uncached: events are high-volume and only read for a stuck StatefulSet.
// kube may be nil; every lookup then fails with errNoKube.
func NewEventLister(kube corev1client.CoreV1Interface) EventLister {
	return eventLister{kube: kube, timeout: eventsListTimeout}
}

type eventLister struct {
	kube    corev1client.CoreV1Interface
	timeout time.Duration
}

func (l eventLister) Warnings(ctx context.Context, namespace string, uid types.UID) ([]corev1.Event, error) {
	if l.kube == nil {
		return nil, errors.New(errNoKube)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, l.timeout,
		errors.Errorf("listing events exceeded its timeout of %s", l.timeout))
	defer cancel()
	list, err := l.kube.Events(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.uid=" + string(uid) + ",type=" + corev1.EventTypeWarning,
		Limit:         eventsListLimit,
	})
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return nil, errors.Wrap(err, "cannot list events")
	}
	return list.Items, nil
}
