package engine

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

func TestEventListerSelectsWarningsOfOneObject(t *testing.T) {
	kube := fake.NewClientset()
	var got metav1.ListOptions
	var ns string
	kube.PrependReactor("list", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		got = a.(k8stesting.ListActionImpl).GetListOptions()
		ns = a.GetNamespace()
		return true, &corev1.EventList{Items: []corev1.Event{{Reason: "FailedCreate"}}}, nil
	})
	events, err := NewEventLister(kube).Warnings(context.Background(), "firebolt", "sts-uid")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(metav1.ListOptions{FieldSelector: "involvedObject.uid=sts-uid,type=Warning"}, got); diff != "" {
		t.Errorf("list options: -want, +got:\n%s", diff)
	}
	if ns != "firebolt" || len(events) != 1 || events[0].Reason != "FailedCreate" {
		t.Errorf("want the one event from namespace firebolt, got %v from %q", events, ns)
	}
}

func TestNoKubernetesClient(t *testing.T) {
	if _, err := NewEventLister(nil).Warnings(context.Background(), "firebolt", "uid"); err == nil || err.Error() != errNoKube {
		t.Errorf("event lister without a client: want %q, got %v", errNoKube, err)
	}
	for _, mode := range []scrape.Mode{scrape.ModeApiserverProxy, scrape.ModePodIP} {
		got := NewProber(nil).Drain(context.Background(), "firebolt", labels.SelectorFromSet(labels.Set{"a": "b"}), scrape.Options{Mode: mode})
		if diff := cmp.Diff(scrape.Verdict{Failing: true, Message: errNoKube}, got); diff != "" {
			t.Errorf("prober without a client in mode %s: -want, +got:\n%s", mode, diff)
		}
	}
}
