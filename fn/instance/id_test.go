package instance

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeriveID(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC))
	a := metav1.ObjectMeta{Name: "demo-m4x8t", UID: "5b7a2a3e-3c1f-4d5e-9a0b-1c2d3e4f5a6b", CreationTimestamp: created}

	got := DeriveID(a)
	if want := "01KYYC8A80558KKP6M99KQ0AVJ"; got != want {
		t.Errorf("DeriveID(a) = %q, want %q (a change here changes the account id of every existing instance)", got, want)
	}
	id, err := ulid.ParseStrict(got)
	if err != nil {
		t.Fatalf("DeriveID(a) = %q is not a ULID: %v", got, err)
	}
	if diff := cmp.Diff(created.Time, id.Timestamp().UTC()); diff != "" {
		t.Errorf("the ULID's time is not the creation time: -want, +got:\n%s", diff)
	}
	if again := DeriveID(*a.DeepCopy()); again != got {
		t.Errorf("DeriveID is not deterministic: %q then %q", got, again)
	}

	b := *a.DeepCopy()
	b.UID = "5b7a2a3e-3c1f-4d5e-9a0b-1c2d3e4f5a6c"
	if DeriveID(b) == got {
		t.Errorf("two composites with different UIDs share id %q", got)
	}
	renamed := *a.DeepCopy()
	renamed.Name = "other"
	if DeriveID(renamed) != got {
		t.Errorf("the id depends on the name although the UID is set")
	}
	noUID := metav1.ObjectMeta{Name: "demo-m4x8t", CreationTimestamp: created}
	if DeriveID(noUID) == DeriveID(metav1.ObjectMeta{Name: "other", CreationTimestamp: created}) {
		t.Errorf("without a UID, different names share an id")
	}
}

func TestInstanceID(t *testing.T) {
	xr := metav1.ObjectMeta{Name: "demo-m4x8t", UID: "u"}
	cases := map[string]struct {
		reason          string
		spec, published string
		want            string
		refused         *blocked
	}{
		"PublishedWinsOverADifferentSpec": {
			reason: "An id in use is never switched: spec.id naming another account is refused with both ids and the way out.",
			spec:   "01KP98J0000000000000000000", published: "01AAAAAAAAAAAAAAAAAAAAAAAA", want: "01AAAAAAAAAAAAAAAAAAAAAAAA",
			refused: &blocked{reason: ReasonIDChangeRefused, message: `spec.id "01KP98J0000000000000000000" is not applied: account "01AAAAAAAAAAAAAAAAAAAAAAAA" (status.id) is in use, and switching accounts would hide every engine's data from the metadata service. ` +
				`To keep the account, set spec.id to "01AAAAAAAAAAAAAAAAAAAAAAAA" (this pins it) or remove spec.id; to use account "01KP98J0000000000000000000", create a new FireboltInstance with that spec.id`},
		},
		"SpecPinsThePublishedID": {
			reason: "spec.id equal to the id in use pins it, silently.",
			spec:   "01AAAAAAAAAAAAAAAAAAAAAAAA", published: "01AAAAAAAAAAAAAAAAAAAAAAAA", want: "01AAAAAAAAAAAAAAAAAAAAAAAA",
		},
		"SpecBeforeAnyIsPublished": {
			reason: "Before any id is in use, spec.id is the account.",
			spec:   "01KP98J0000000000000000000", want: "01KP98J0000000000000000000",
		},
		"PublishedIsKept": {
			reason:    "Without spec.id the id in use stays.",
			published: "01AAAAAAAAAAAAAAAAAAAAAAAA", want: "01AAAAAAAAAAAAAAAAAAAAAAAA",
		},
		"DerivedWhenNeither": {reason: "A new instance without spec.id gets a derived id.", want: DeriveID(xr)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, refused := instanceID(tc.spec, tc.published, xr)
			if got != tc.want {
				t.Errorf("%s\ninstanceID(%q, %q) = %q, want %q", tc.reason, tc.spec, tc.published, got, tc.want)
			}
			if diff := cmp.Diff(tc.refused, refused, cmp.AllowUnexported(blocked{})); diff != "" {
				t.Errorf("%s\ninstanceID(%q, %q) refusal: -want, +got:\n%s", tc.reason, tc.spec, tc.published, diff)
			}
		})
	}
}
