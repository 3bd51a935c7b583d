package reasons_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/fn/reasons"
)

func TestEntriesAreComplete(t *testing.T) {
	types := map[string]bool{}
	for _, c := range reasons.Conditions() {
		if len(c.Kinds) == 0 || c.About == "" {
			t.Errorf("condition %s: Kinds and About are required", c.Type)
		}
		types[c.Type] = true
	}
	seen := map[string]bool{}
	used := map[string]bool{}
	for _, e := range reasons.All() {
		id := e.Type + "/" + e.Reason
		if seen[id] {
			t.Errorf("%s is listed twice", id)
		}
		seen[id] = true
		used[e.Type] = true
		if !types[e.Type] {
			t.Errorf("%s: type %s is not in reasons.Conditions", id, e.Type)
		}
		if e.Meaning == "" || e.Action == "" {
			t.Errorf("%s: Meaning and Action are required", id)
		}
		for _, s := range strings.Split(e.Status, "/") {
			if s != "True" && s != "False" && s != "Unknown" {
				t.Errorf("%s: status %q is not True, False, Unknown or two of them joined by /", id, e.Status)
			}
		}
	}
	for typ := range types {
		if !used[typ] {
			t.Errorf("condition %s has no reason", typ)
		}
	}
}

func TestAllIsOrdered(t *testing.T) {
	all := reasons.All()
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		if a.Type > b.Type || (a.Type == b.Type && a.Reason >= b.Reason) {
			t.Errorf("All is not ordered by type, then reason: %s/%s before %s/%s", a.Type, a.Reason, b.Type, b.Reason)
		}
	}
	all[0].Meaning = "changed"
	if reasons.All()[0].Meaning == "changed" {
		t.Error("All returns the catalogue itself: a caller can change it")
	}
}

func TestLookup(t *testing.T) {
	cases := map[string]struct {
		typ, reason string
		wantOK      bool
		wantStatus  string
	}{
		"an engine reason":             {typ: "EngineReady", reason: "DrainCheckFailing", wantOK: true, wantStatus: "False"},
		"a reason shared by two types": {typ: "GatewayTLSReady", reason: "Disabled", wantOK: true, wantStatus: "True"},
		"an auto-stop reason":          {typ: "AutoStop", reason: "Idle", wantOK: true, wantStatus: "True"},
		"a reason of another type":     {typ: "EngineReady", reason: "Idle"},
		"an unknown type":              {typ: "Ready", reason: "EngineReady"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, ok := reasons.Lookup(tc.typ, tc.reason)
			got := struct {
				OK     bool
				Status string
			}{ok, e.Status}
			want := struct {
				OK     bool
				Status string
			}{tc.wantOK, tc.wantStatus}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Lookup(%q, %q) (-want +got):\n%s", tc.typ, tc.reason, diff)
			}
			if ok && (e.Type != tc.typ || e.Reason != tc.reason) {
				t.Errorf("Lookup(%q, %q) = %s/%s", tc.typ, tc.reason, e.Type, e.Reason)
			}
		})
	}
}
