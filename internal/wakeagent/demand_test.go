package wakeagent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestDemandRecordAndPrune(t *testing.T) {
	m, reg := newTestMetrics(t)
	d := NewDemand(10, m)

	d.Record("a", t0)
	d.Record("b", t0.Add(time.Minute))
	d.Record("a", t0.Add(-time.Minute)) // an older demand does not move the last one back
	release, ok := d.Hold("a")
	if !ok {
		t.Fatal("Hold shed under capacity")
	}
	want := withStamps(0, 0, 0, map[string]float64{
		`firebolt_gateway_wake_last_demand_timestamp_seconds{engine="a"}`: float64(t0.Unix()),
		`firebolt_gateway_wake_last_demand_timestamp_seconds{engine="b"}`: float64(t0.Add(time.Minute).Unix()),
		`firebolt_gateway_wake_pending_holds{engine="a"}`:                 1,
		`firebolt_gateway_wake_pending_holds{engine="b"}`:                 0,
		`firebolt_gateway_wake_shed_total{engine="a"}`:                    0,
		`firebolt_gateway_wake_shed_total{engine="b"}`:                    0,
	})
	if diff := cmp.Diff(want, series(t, reg)); diff != "" {
		t.Errorf("after two demands and a hold (-want +got):\n%s", diff)
	}

	// Past retention: b goes with its series, a stays while held.
	d.Prune(t0.Add(time.Minute + DemandRetention))
	if _, ok := d.Last("b"); ok {
		t.Error("b kept past retention")
	}
	if _, ok := d.Last("a"); !ok {
		t.Error("a pruned while a request is held for it")
	}
	want = withStamps(0, 0, 0, map[string]float64{
		`firebolt_gateway_wake_last_demand_timestamp_seconds{engine="a"}`: float64(t0.Unix()),
		`firebolt_gateway_wake_pending_holds{engine="a"}`:                 1,
		`firebolt_gateway_wake_shed_total{engine="a"}`:                    0,
	})
	if diff := cmp.Diff(want, series(t, reg)); diff != "" {
		t.Errorf("after pruning (-want +got):\n%s", diff)
	}

	release()
	release() // a second release frees nothing more
	if got := d.Holds(); got != 0 {
		t.Errorf("holds after release: %d, want 0", got)
	}
	d.Prune(t0.Add(DemandRetention - time.Second))
	if _, ok := d.Last("a"); !ok {
		t.Error("a pruned before retention")
	}
	d.Prune(t0.Add(DemandRetention))
	if diff := cmp.Diff(withStamps(0, 0, 0, nil), series(t, reg)); diff != "" {
		t.Errorf("after pruning everything (-want +got):\n%s", diff)
	}
}

func TestDemandCapacity(t *testing.T) {
	cases := map[string]struct {
		capacity int
		holds    int
		wantOK   int
	}{
		"UnderCapacity": {capacity: 3, holds: 2, wantOK: 2},
		"AtCapacity":    {capacity: 2, holds: 3, wantOK: 2},
		"Zero":          {capacity: 0, holds: 2, wantOK: 0},
		"Negative":      {capacity: -1, holds: 1, wantOK: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, reg := newTestMetrics(t)
			d := NewDemand(tc.capacity, m)
			d.Record("e", t0)
			ok := 0
			for range tc.holds {
				if _, held := d.Hold("e"); held {
					ok++
				}
			}
			if ok != tc.wantOK {
				t.Errorf("held %d of %d, want %d", ok, tc.holds, tc.wantOK)
			}
			want := withStamps(0, 0, 0, map[string]float64{
				`firebolt_gateway_wake_last_demand_timestamp_seconds{engine="e"}`: float64(t0.Unix()),
				`firebolt_gateway_wake_pending_holds{engine="e"}`:                 float64(tc.wantOK),
				`firebolt_gateway_wake_shed_total{engine="e"}`:                    float64(tc.holds - tc.wantOK),
			})
			if diff := cmp.Diff(want, series(t, reg)); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDemandBound(t *testing.T) {
	m, reg := newTestMetrics(t)
	d := NewDemand(1, m)
	for i := range MaxTrackedEngines {
		if !d.Record(fmt.Sprintf("e%d", i), t0) {
			t.Fatalf("engine %d not tracked under the bound", i)
		}
	}
	if d.Record("one-too-many", t0) {
		t.Error("tracked past MaxTrackedEngines")
	}
	if !d.Record("e0", t0.Add(time.Second)) {
		t.Error("a tracked engine's new demand was dropped")
	}
	// An untracked engine is still held, without a series of its own.
	release, ok := d.Hold("one-too-many")
	if !ok {
		t.Fatal("an untracked engine was shed under capacity")
	}
	if _, ok := d.Hold("one-too-many"); ok {
		t.Error("held past capacity")
	}
	release()

	got := series(t, reg)
	if v := got[`firebolt_gateway_wake_demand_dropped_total{}`]; v != 1 {
		t.Errorf("demand_dropped_total = %v, want 1", v)
	}
	engineSeries := 0
	for k := range got {
		if k == `firebolt_gateway_wake_pending_holds{engine="one-too-many"}` || k == `firebolt_gateway_wake_shed_total{engine="one-too-many"}` {
			t.Errorf("untracked engine has series %s", k)
		}
		if strings.HasPrefix(k, "firebolt_gateway_wake_pending_holds{") {
			engineSeries++
		}
	}
	if engineSeries != MaxTrackedEngines {
		t.Errorf("%d pending_holds series, want %d", engineSeries, MaxTrackedEngines)
	}
}
