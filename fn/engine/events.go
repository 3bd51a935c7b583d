package engine

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/crossplane/function-sdk-go/errors"
)

// NewEventLister returns an EventLister that lists events with kube,
// uncached: events are high-volume and only read for a stuck StatefulSet.
// kube may be nil; every lookup then fails with errNoKube.
func NewEventLister(kube kubernetes.Interface) EventLister {
	return eventLister{kube: kube}
}

type eventLister struct{ kube kubernetes.Interface }

func (l eventLister) Warnings(ctx context.Context, namespace string, uid types.UID) ([]corev1.Event, error) {
	if l.kube == nil {
		return nil, errors.New(errNoKube)
	}
	list, err := l.kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.uid=" + string(uid) + ",type=" + corev1.EventTypeWarning,
	})
	if err != nil {
		return nil, errors.Wrap(err, "cannot list events")
	}
	return list.Items, nil
}
