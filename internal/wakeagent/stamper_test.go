package wakeagent

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestClaimStamperPatch: the stamp is one JSON merge patch of the claim's
// wake annotation, on the namespaced fireboltengines resource, with the
// time in RFC 3339 UTC to the second.
func TestClaimStamperPatch(t *testing.T) {
	api := newFakeAPI(t)
	at := time.Date(2026, 3, 1, 13, 4, 5, 999_000_000, time.FixedZone("CET", 3600))
	if err := api.stamper(t).Stamp(t.Context(), "my-engine", at); err != nil {
		t.Fatal(err)
	}
	want := []patch{{
		Method:      http.MethodPatch,
		Path:        "/apis/compute.firebolt.io/v1alpha1/namespaces/gw/fireboltengines/my-engine",
		ContentType: "application/merge-patch+json",
		Body:        `{"metadata":{"annotations":{"firebolt.io/wake-requested":"2026-03-01T12:04:05Z"}}}`,
	}}
	if diff := cmp.Diff(want, api.received()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestClaimStamperError(t *testing.T) {
	api := newFakeAPI(t)
	api.failWith(http.StatusForbidden)
	err := api.stamper(t).Stamp(t.Context(), "my-engine", t0)
	if err == nil {
		t.Fatal("a refused patch reported no error")
	}
	if strings.Contains(err.Error(), "secret-token") {
		t.Errorf("the error carries the token: %v", err)
	}
}
