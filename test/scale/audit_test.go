package scale

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

func TestParseAudit(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)
	ev := func(at time.Duration, verb, ua, uri string, ref auditv1.ObjectReference) string {
		b, err := json.Marshal(auditv1.Event{
			Verb: verb, UserAgent: ua, RequestURI: uri, ObjectRef: &ref,
			StageTimestamp: metav1.NewMicroTime(t0.Add(at)),
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	xp := "crossplane-core-v2.4.0-f893fb202a34/v0.0.0 (linux/amd64) kubernetes/$Format"
	sts := auditv1.ObjectReference{Resource: "statefulsets", APIGroup: "apps", Name: "e-g0"}
	claimStatus := auditv1.ObjectReference{Resource: "fireboltengines", APIGroup: "compute.firebolt.io", Subresource: "status"}
	log := strings.Join([]string{
		ev(0, "patch", xp, "/apis/apps/v1/namespaces/s/statefulsets/e-g0?fieldManager=apiextensions.crossplane.io%2Fcomposed%2Fabc&force=true", sts),
		ev(time.Second, "patch", xp, "/apis/apps/v1/namespaces/s/statefulsets/e-g1?fieldManager=apiextensions.crossplane.io%2Fcomposed%2Fdef&force=true", sts),
		ev(2*time.Second, "update", xp, "/apis/compute.firebolt.io/v1alpha1/namespaces/s/fireboltengines/e/status", claimStatus),
		ev(3*time.Second, "get", xp, "/apis/apps/v1/namespaces/s/statefulsets/e-g0", sts),
		ev(4*time.Second, "patch", "kubectl/v1.36.2", "/apis/apps/v1/namespaces/s/statefulsets/e-g0", sts),
		`not json`,
		`{"kind":"Event","verb":"create"}`,
		// At the end of the window: the next phase's.
		ev(10*time.Second, "update", xp, "/apis/compute.firebolt.io/v1alpha1/namespaces/s/fireboltengines/e/status", claimStatus),
		// Before it.
		ev(-time.Second, "create", xp, "/api/v1/namespaces/s/events", auditv1.ObjectReference{Resource: "events"}),
	}, "\n")

	got, err := ParseAudit(strings.NewReader(log), t0, t0.Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	composed := Writer{Agent: "crossplane-core", Manager: "apiextensions.crossplane.io/composed/…"}
	want := AuditWrites{
		{Writer: composed, Key: Key{Group: "apps", Resource: "statefulsets", Verb: "APPLY"}}:                                                                2,
		{Writer: Writer{Agent: "crossplane-core"}, Key: Key{Group: "compute.firebolt.io", Resource: "fireboltengines", Subresource: "status", Verb: "PUT"}}: 1,
		{Writer: Writer{Agent: "kubectl"}, Key: Key{Group: "apps", Resource: "statefulsets", Verb: "PATCH"}}:                                                1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseAudit(): -want +got:\n%s", diff)
	}
	if got.Total() != 4 {
		t.Errorf("Total() = %d, want 4", got.Total())
	}

	md := AuditMarkdown([]string{"create"}, []AuditWrites{got}, 2, 2)
	for _, line := range []string{
		"| crossplane-core (apiextensions.crossplane.io/composed/…) | 1.0 |",
		"| all | 2.0 |",
		"| crossplane-core (apiextensions.crossplane.io/composed/…) | statefulsets.apps | APPLY | 1.0 |",
		"| the other 1 rows | | | 0.5 |",
	} {
		if !strings.Contains(md, line+"\n") {
			t.Errorf("AuditMarkdown() lacks %q:\n%s", line, md)
		}
	}
}

func TestParseAuditRefusesAHugeLine(t *testing.T) {
	if _, err := ParseAudit(strings.NewReader(strings.Repeat("x", maxAuditLine+1)), time.Time{}, time.Now()); err == nil {
		t.Error("ParseAudit() of a line longer than the bound: want an error")
	}
}
