package wakeagent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// slice is an EndpointSlice of service with one endpoint per condition
// (nil: unknown).
func slice(name, service string, ready ...*bool) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: testNamespace, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for _, r := range ready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: r}})
	}
	return s
}

const testNamespace = "gw"

func TestReadiness(t *testing.T) {
	type event struct {
		del   bool
		slice *discoveryv1.EndpointSlice
	}
	up := func(s *discoveryv1.EndpointSlice) event { return event{slice: s} }
	del := func(name string) event { return event{del: true, slice: slice(name, "")} }
	cases := map[string]struct {
		events []event
		want   map[string]bool
	}{
		"NoSlices": {
			want: map[string]bool{"e": false},
		},
		"ReadyEndpoint": {
			events: []event{up(slice("s1", "e-service", ptr.To(false), ptr.To(true)))},
			want:   map[string]bool{"e": true},
		},
		"UnknownConditionIsReady": {
			events: []event{up(slice("s1", "e-service", nil))},
			want:   map[string]bool{"e": true},
		},
		"NoReadyEndpoint": {
			events: []event{up(slice("s1", "e-service", ptr.To(false)))},
			want:   map[string]bool{"e": false},
		},
		"NoEndpoints": {
			events: []event{up(slice("s1", "e-service"))},
			want:   map[string]bool{"e": false},
		},
		"NotAnEngineService": {
			events: []event{up(slice("s1", "e", ptr.To(true))), up(slice("s2", "-service", ptr.To(true)))},
			want:   map[string]bool{"e": false, "": false},
		},
		"AnyOfTheEnginesSlices": {
			events: []event{up(slice("old", "e-service", ptr.To(true))), up(slice("new", "e-service", ptr.To(false))), up(slice("old", "e-service", ptr.To(false)))},
			want:   map[string]bool{"e": false},
		},
		"OtherSliceStaysReady": {
			events: []event{up(slice("old", "e-service", ptr.To(true))), up(slice("new", "e-service", ptr.To(true))), del("old")},
			want:   map[string]bool{"e": true},
		},
		"LastReadySliceDeleted": {
			events: []event{up(slice("old", "e-service", ptr.To(true))), up(slice("new", "e-service", ptr.To(false))), del("old")},
			want:   map[string]bool{"e": false},
		},
		"SliceMovesToAnotherEngine": {
			events: []event{up(slice("s1", "a-service", ptr.To(true))), up(slice("s1", "b-service", ptr.To(true)))},
			want:   map[string]bool{"a": false, "b": true},
		},
		"EnginesAreSeparate": {
			events: []event{up(slice("s1", "a-service", ptr.To(true))), up(slice("s2", "b-service", ptr.To(false)))},
			want:   map[string]bool{"a": true, "b": false},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := NewReadiness()
			for _, e := range tc.events {
				key := testNamespace + "/" + e.slice.Name
				if e.del {
					r.Delete(key)
					continue
				}
				r.Upsert(key, e.slice)
			}
			got := map[string]bool{}
			for engine := range tc.want {
				got[engine] = r.Ready(engine)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("readiness (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadinessSynced(t *testing.T) {
	r := NewReadiness()
	if r.Synced() {
		t.Fatal("a new Readiness is synced")
	}
	r.MarkSynced()
	if !r.Synced() {
		t.Fatal("MarkSynced did not sync")
	}
}

func TestReadinessWatch(t *testing.T) {
	r := NewReadiness()
	r.Upsert("gw/s1", slice("s1", "e-service", ptr.To(false)))

	ready, became1, release1 := r.Watch("e")
	if ready {
		t.Fatal("Watch: ready without a ready endpoint")
	}
	_, became2, release2 := r.Watch("e")
	if became1 != became2 {
		t.Error("two waiters on one engine got different channels")
	}
	// One waiter leaving keeps the channel for the other.
	release1()
	release1()
	if got := len(r.waiters); got != 1 {
		t.Errorf("after one of two waiters left: %d waiter entries, want 1", got)
	}

	// A not-ready update wakes nobody; a ready one wakes everyone.
	r.Upsert("gw/s1", slice("s1", "e-service", ptr.To(false)))
	select {
	case <-became2:
		t.Fatal("woken by a not-ready update")
	default:
	}
	r.Upsert("gw/s2", slice("s2", "e-service", ptr.To(true)))
	select {
	case <-became2:
	default:
		t.Fatal("not woken when the engine became ready")
	}
	if ready, _, _ := r.Watch("e"); !ready {
		t.Error("Watch: not ready after a ready endpoint")
	}

	// The engine stops again: a new waiter gets a new channel, which the
	// old waiter's late release leaves alone.
	r.Delete("gw/s2")
	_, became3, release3 := r.Watch("e")
	if became3 == became2 {
		t.Fatal("a new waiter got the closed channel")
	}
	release2()
	if got := len(r.waiters); got != 1 {
		t.Errorf("a stale release removed the current waiter: %d entries, want 1", got)
	}
	release3()
	if got := len(r.waiters); got != 0 {
		t.Errorf("after every waiter left: %d waiter entries, want 0", got)
	}
}

func TestTrimSlice(t *testing.T) {
	s := slice("s1", "e-service", ptr.To(true), nil)
	s.Labels["other"] = "x"
	s.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}}
	got, err := trimSlice(s)
	if err != nil {
		t.Fatal(err)
	}
	want := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "s1", Namespace: testNamespace, Labels: map[string]string{discoveryv1.LabelServiceName: "e-service"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			{Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
			{},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimSlice (-want +got):\n%s", diff)
	}
}
