package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
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
	events, err := NewEventLister(kube.CoreV1()).Warnings(context.Background(), "firebolt", "sts-uid")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(metav1.ListOptions{FieldSelector: "involvedObject.uid=sts-uid,type=Warning", Limit: eventsListLimit}, got); diff != "" {
		t.Errorf("list options: -want, +got:\n%s", diff)
	}
	if ns != "firebolt" || len(events) != 1 || events[0].Reason != "FailedCreate" {
		t.Errorf("want the one event from namespace firebolt, got %v from %q", events, ns)
	}
}

// TestEventListerTimesOut shows that an API server that never answers the
// events list costs the call eventsListTimeout, not the rest of Crossplane's
// budget for it.
func TestEventListerTimesOut(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	kube, err := corev1client.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}

	type result struct {
		events []corev1.Event
		err    error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		events, err := NewEventLister(kube).Warnings(context.Background(), "firebolt", "sts-uid")
		done <- result{events, err}
	}()
	select {
	case r := <-done:
		want := "cannot list events: listing events exceeded its timeout of 5s"
		if r.err == nil || r.err.Error() != want || r.events != nil {
			t.Errorf("Warnings: want error %q, got %v, %v", want, r.events, r.err)
		}
		if took := time.Since(start); took < eventsListTimeout {
			t.Errorf("Warnings returned after %s, before its timeout", took)
		}
	case <-time.After(3 * eventsListTimeout):
		t.Fatalf("Warnings did not return within %s of a list that never answers", 3*eventsListTimeout)
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
