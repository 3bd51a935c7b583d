package instancestate

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

func at(sec int) *metav1.Time {
	t := metav1.NewTime(time.Date(2026, 11, 28, 6, 0, sec, 0, time.UTC))
	return &t
}

// rotating is an instance in the middle of a rotation: signing-2 active,
// signing-1 validation-only, waiting for two engines.
func rotating() (v1alpha1.FireboltInstanceSpec, v1alpha1.FireboltInstanceStatus, *composite.Condition) {
	spec := v1alpha1.FireboltInstanceSpec{
		ID: "ACCT", MetricScrapeMode: "direct",
		Metadata: v1alpha1.MetadataSpec{Postgres: &v1alpha1.PostgresSpec{CredentialsSecretRef: v1alpha1.SecretReference{Name: "pg"}}},
		Auth:     &v1alpha1.AuthSpec{Enabled: true, Local: &v1alpha1.LocalAuthSpec{}},
	}
	status := v1alpha1.FireboltInstanceStatus{
		ID: "ACCT", MetadataReady: true, MetadataEndpoint: "demo-metadata.firebolt.svc.cluster.local:7000", GatewayReady: true,
		Phase: "Ready", ObservedGeneration: 3, LastReconciled: at(0),
		Auth: &v1alpha1.AuthStatus{
			SigningKeyGeneration: 2,
			SigningKeys: []v1alpha1.SigningKeyStatus{
				{ID: "signing-1", SecretName: "demo-auth-signing", Phase: v1alpha1.SigningKeyValidationOnly, ObservedPublicKeyFingerprint: "aa", CreatedAt: at(1), DemotedAt: at(5)},
				{ID: "signing-2", SecretName: "demo-auth-signing-signing-2", Phase: v1alpha1.SigningKeyActive, ObservedPublicKeyFingerprint: "bb", CreatedAt: at(4)},
			},
			PendingRotationStep: "RetireAfterRetain", PendingSince: at(5), LaggingEngines: []string{"e1", "e2"}, LaggingEngineCount: 2,
		},
	}
	return spec, status, &composite.Condition{Type: "AuthReady", Status: metav1.ConditionTrue, Reason: "Ready", Message: "signing-2 signs; waiting for 2 engines"}
}

func published(t *testing.T, spec v1alpha1.FireboltInstanceSpec, status v1alpha1.FireboltInstanceStatus, auth *composite.Condition) string {
	t.Helper()
	cm, err := ConfigMap("firebolt", "demo", Of("demo", spec, status, auth))
	if err != nil {
		t.Fatal(err)
	}
	if cm.Name != "demo-engines" || cm.Namespace != "firebolt" {
		t.Fatalf("ConfigMap %s/%s, want firebolt/demo-engines", cm.Namespace, cm.Name)
	}
	return cm.Data[Key]
}

// TestStateChangesOnlyForEngines: what changes at every step of an
// instance and that no engine reads leaves the ConfigMap as it is, so no
// engine is called; what an engine renders or gates on changes it.
func TestStateChangesOnlyForEngines(t *testing.T) {
	spec, status, auth := rotating()
	base := published(t, spec, status, auth)

	same := map[string]func(*v1alpha1.FireboltInstanceSpec, *v1alpha1.FireboltInstanceStatus, *composite.Condition){
		"lastReconciled": func(_ *v1alpha1.FireboltInstanceSpec, s *v1alpha1.FireboltInstanceStatus, _ *composite.Condition) {
			s.LastReconciled = at(30)
		},
		"observedGeneration": func(_ *v1alpha1.FireboltInstanceSpec, s *v1alpha1.FireboltInstanceStatus, _ *composite.Condition) {
			s.ObservedGeneration = 4
		},
		"gateway": func(sp *v1alpha1.FireboltInstanceSpec, s *v1alpha1.FireboltInstanceStatus, _ *composite.Condition) {
			s.GatewayReady = false
			sp.Gateway.Replicas = new(int32(5))
		},
		"lagging engines": func(_ *v1alpha1.FireboltInstanceSpec, s *v1alpha1.FireboltInstanceStatus, _ *composite.Condition) {
			s.Auth.LaggingEngines, s.Auth.LaggingEngineCount = []string{"e2"}, 1
		},
		"pending step": func(_ *v1alpha1.FireboltInstanceSpec, s *v1alpha1.FireboltInstanceStatus, _ *composite.Condition) {
			s.Auth.PendingSince = at(9)
		},
		"key timestamps": func(_ *v1alpha1.FireboltInstanceSpec, s *v1alpha1.FireboltInstanceStatus, _ *composite.Condition) {
			s.Auth.SigningKeys[0].RetireEligibleAt = at(20)
		},
		"AuthReady's message": func(_ *v1alpha1.FireboltInstanceSpec, _ *v1alpha1.FireboltInstanceStatus, c *composite.Condition) {
			c.Message = "signing-2 signs"
		},
	}
	for name, mutate := range same {
		sp, st, c := rotating()
		mutate(&sp, &st, c)
		if got := published(t, sp, st, c); got != base {
			t.Errorf("%s changed what engines read:\n was %s\n now %s", name, base, got)
		}
	}

	changed := map[string]func(*v1alpha1.FireboltInstanceSpec, *v1alpha1.FireboltInstanceStatus, *composite.Condition){
		"metadata not ready": func(_ *v1alpha1.FireboltInstanceSpec, s *v1alpha1.FireboltInstanceStatus, _ *composite.Condition) {
			s.MetadataReady = false
		},
		"a key retired": func(_ *v1alpha1.FireboltInstanceSpec, s *v1alpha1.FireboltInstanceStatus, _ *composite.Condition) {
			s.Auth.SigningKeys[0].Phase = v1alpha1.SigningKeyRemoving
		},
		"a key minted": func(_ *v1alpha1.FireboltInstanceSpec, s *v1alpha1.FireboltInstanceStatus, _ *composite.Condition) {
			s.Auth.SigningKeys = s.Auth.SigningKeys[1:]
			s.Auth.SigningKeyGeneration = 3
			s.Auth.SigningKeys = append(s.Auth.SigningKeys, v1alpha1.SigningKeyStatus{ID: "signing-3", Phase: v1alpha1.SigningKeyValidationOnly, ObservedPublicKeyFingerprint: "cc"})
		},
		"auth not ready": func(_ *v1alpha1.FireboltInstanceSpec, _ *v1alpha1.FireboltInstanceStatus, c *composite.Condition) {
			c.Status, c.Reason = metav1.ConditionFalse, "AuthSpecInvalid"
		},
		"token expiry": func(sp *v1alpha1.FireboltInstanceSpec, _ *v1alpha1.FireboltInstanceStatus, _ *composite.Condition) {
			sp.Auth.Local.TokenExpiry = "1h"
		},
		"scrape mode": func(sp *v1alpha1.FireboltInstanceSpec, _ *v1alpha1.FireboltInstanceStatus, _ *composite.Condition) {
			sp.MetricScrapeMode = ""
		},
		"external PostgreSQL": func(sp *v1alpha1.FireboltInstanceSpec, _ *v1alpha1.FireboltInstanceStatus, _ *composite.Condition) {
			sp.Metadata.Postgres = nil
		},
	}
	for name, mutate := range changed {
		sp, st, c := rotating()
		mutate(&sp, &st, c)
		if got := published(t, sp, st, c); got == base {
			t.Errorf("%s left what engines read as it was", name)
		}
	}
}

// TestStateRoundTrip: what engines decode is what the instance holds, for
// each field they read.
func TestStateRoundTrip(t *testing.T) {
	spec, status, auth := rotating()
	got, problem := Decode(map[string]string{Key: published(t, spec, status, auth)})
	if problem != "" {
		t.Fatal(problem)
	}
	wantSpec := v1alpha1.FireboltInstanceSpec{ID: "ACCT", MetricScrapeMode: "direct", Auth: spec.Auth,
		Metadata: v1alpha1.MetadataSpec{Postgres: &v1alpha1.PostgresSpec{CredentialsSecretRef: v1alpha1.SecretReference{Name: "pg"}}}}
	if diff := cmp.Diff(wantSpec, got.Spec()); diff != "" {
		t.Errorf("spec: -want, +got:\n%s", diff)
	}
	wantStatus := v1alpha1.FireboltInstanceStatus{ID: "ACCT", MetadataReady: true, MetadataEndpoint: status.MetadataEndpoint,
		Auth: &v1alpha1.AuthStatus{SigningKeyGeneration: 2, SigningKeys: []v1alpha1.SigningKeyStatus{
			{ID: "signing-2", SecretName: "demo-auth-signing-signing-2", Phase: v1alpha1.SigningKeyActive, ObservedPublicKeyFingerprint: "bb"},
			{ID: "signing-1", SecretName: "demo-auth-signing", Phase: v1alpha1.SigningKeyValidationOnly, ObservedPublicKeyFingerprint: "aa"},
		}}}
	if diff := cmp.Diff(wantStatus, got.Status()); diff != "" {
		t.Errorf("status: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(&composite.Condition{Type: "AuthReady", Status: metav1.ConditionTrue, Reason: "Ready"}, got.AuthReady); diff != "" {
		t.Errorf("AuthReady: -want, +got:\n%s", diff)
	}
}

func TestDecodeHostile(t *testing.T) {
	cases := map[string]struct {
		data map[string]string
		want string
	}{
		"Empty":       {map[string]string{}, "its ConfigMap has no data.instance"},
		"ErrorOnly":   {map[string]string{ErrorKey: "too big"}, "too big"},
		"NotJSON":     {map[string]string{Key: "{"}, "cannot decode data.instance of its ConfigMap: unexpected end of JSON input"},
		"WrongType":   {map[string]string{Key: `{"metadataReady":"yes"}`}, "cannot decode data.instance of its ConfigMap: json: cannot unmarshal"},
		"UnknownKeys": {map[string]string{Key: `{"later":1,"metadataReady":true}`}, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, problem := Decode(tc.data)
			if !strings.HasPrefix(problem, tc.want) || (tc.want == "") != (problem == "") {
				t.Errorf("Decode(%v) says %q, want %q", tc.data, problem, tc.want)
			}
		})
	}
}

// TestStateTooBig: a state longer than a ConfigMap holds is not published;
// the ConfigMap says why instead.
func TestStateTooBig(t *testing.T) {
	spec, status, auth := rotating()
	spec.ID = strings.Repeat("x", maxBytes)
	cm, err := ConfigMap("firebolt", "demo", Of("demo", spec, status, auth))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Data[Key]; ok || !strings.Contains(cm.Data[ErrorKey], "more than the 1048568 a ConfigMap holds") {
		t.Errorf("data %v, want only data.error saying it is too big", cm.Data)
	}
}
