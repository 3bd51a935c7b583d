package engine

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
	"github.com/firebolt-db/firebolt-crossplane/fn/signing"
)

// testAuthSpec is an instance's enabled auth: a local admin, one
// cert-manager key policy with rotation.
func testAuthSpec() *v1alpha1.AuthSpec {
	return &v1alpha1.AuthSpec{
		Enabled: true,
		Local: &v1alpha1.LocalAuthSpec{
			PasswordLogin:    "admin_only",
			Admin:            v1alpha1.AdminSpec{Name: "firebolt", Password: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "inst-admin"}, Key: "password"}},
			SigningAlgorithm: "ES384",
			TokenExpiry:      "1h",
			SigningKeys: &v1alpha1.SigningKeyPolicy{
				CertManager:      v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "signing-ca", Kind: "ClusterIssuer"}, Algorithm: "ECDSA", Size: 384},
				RotationInterval: &metav1.Duration{Duration: 720 * time.Hour},
				RetainDuration:   &metav1.Duration{Duration: 48 * time.Hour},
			},
		},
	}
}

func testSigningKey(n int, phase v1alpha1.SigningKeyPhase, fp string) v1alpha1.SigningKeyStatus {
	id := signing.KeyID(int64(n))
	return v1alpha1.SigningKeyStatus{ID: id, SecretName: signing.CertificateName("inst", id), Phase: phase, ObservedPublicKeyFingerprint: fp, Algorithm: "ECDSA", Size: 384}
}

// withAuth makes in's instance enable auth, ready, with one issued key,
// and its admin password's Secret found at version "7" with its key set.
func withAuth(in *Inputs) {
	in.Instance.Spec.Auth = testAuthSpec()
	in.Instance.Status.Auth = &v1alpha1.AuthStatus{SigningKeyGeneration: 1, SigningKeys: []v1alpha1.SigningKeyStatus{testSigningKey(1, v1alpha1.SigningKeyActive, strings.Repeat("ab", 32))}}
	in.Instance.AuthReady = &Condition{Type: TypeInstanceAuthReady, Status: metav1.ConditionTrue, Reason: "Ready", Message: "signing keys: signing-1 Active"}
	in.Instance.AdminSecret = composite.SecretFacts{Resolved: true, Found: true, ResourceVersion: "7", KeyNonEmpty: true}
}

// TestInstanceAuthGate: with auth enabled, an engine renders only once the
// instance says its auth is ready, a key is issued and the admin
// password's Secret is there with its key; until then it waits as for an
// instance that is not ready, saying why.
func TestInstanceAuthGate(t *testing.T) {
	const ref = "FireboltInstance firebolt/inst is not ready: "
	cases := map[string]struct {
		mutate func(*Inputs)
		// want is the InstanceReady condition's status and message.
		status  metav1.ConditionStatus
		message string
		auth    bool
	}{
		"AuthOff": {
			mutate: func(in *Inputs) {
				in.Instance.Spec.Auth, in.Instance.Status.Auth, in.Instance.AuthReady = nil, nil, nil
			},
			status: metav1.ConditionTrue, message: "FireboltInstance firebolt/inst is ready",
		},
		"AuthDisabledKeepsItsKeyCounter": {
			mutate: func(in *Inputs) {
				in.Instance.Spec.Auth = &v1alpha1.AuthSpec{}
				in.Instance.Status.Auth = &v1alpha1.AuthStatus{SigningKeyGeneration: 3}
				in.Instance.AuthReady = &Condition{Type: TypeInstanceAuthReady, Status: metav1.ConditionTrue, Reason: "Disabled"}
			},
			status: metav1.ConditionTrue, message: "FireboltInstance firebolt/inst is ready",
		},
		"Ready": {
			mutate: func(*Inputs) {},
			status: metav1.ConditionTrue, message: "FireboltInstance firebolt/inst is ready", auth: true,
		},
		"AuthReadyNotReported": {
			mutate: func(in *Inputs) { in.Instance.AuthReady = nil },
			status: metav1.ConditionFalse, message: ref + "its authentication is not ready (AuthReady is not reported yet)",
		},
		"AuthReadyFalse": {
			mutate: func(in *Inputs) {
				in.Instance.AuthReady = &Condition{Type: TypeInstanceAuthReady, Status: metav1.ConditionFalse, Reason: "SigningKeyPending", Message: "waiting for cert-manager to issue signing key signing-1"}
			},
			status: metav1.ConditionFalse, message: ref + "its authentication is not ready (AuthReady SigningKeyPending: waiting for cert-manager to issue signing key signing-1)",
		},
		"AuthReadyUnknownWithoutMessage": {
			mutate: func(in *Inputs) {
				in.Instance.AuthReady = &Condition{Type: TypeInstanceAuthReady, Status: metav1.ConditionUnknown, Reason: "Pending"}
			},
			status: metav1.ConditionFalse, message: ref + "its authentication is not ready (AuthReady Pending)",
		},
		"HostileAuthReadyIsClipped": {
			mutate: func(in *Inputs) {
				in.Instance.AuthReady = &Condition{Type: TypeInstanceAuthReady, Status: metav1.ConditionFalse, Reason: strings.Repeat("R", 1000), Message: strings.Repeat("é", 100000) + "\xff"}
			},
			status: metav1.ConditionFalse,
			message: ref + "its authentication is not ready (AuthReady " + strings.Repeat("R", maxQuotedAuthReason) + "…: " +
				strings.Repeat("é", maxQuotedAuthMessage/2) + "…)",
		},
		"NoKeyIssued": {
			mutate: func(in *Inputs) { in.Instance.Status.Auth = &v1alpha1.AuthStatus{SigningKeyGeneration: 1} },
			status: metav1.ConditionFalse, message: ref + "its authentication is not ready (no signing key is issued yet: status.auth lists no Active key)",
		},
		"NoAuthStatus": {
			mutate: func(in *Inputs) { in.Instance.Status.Auth = nil },
			status: metav1.ConditionFalse, message: ref + "its authentication is not ready (no signing key is issued yet: status.auth lists no Active key)",
		},
		"AdminSecretNotFetchedYet": {
			mutate: func(in *Inputs) { in.Instance.AdminSecret = composite.SecretFacts{} },
			status: metav1.ConditionUnknown, message: ref + "its authentication is not ready (waiting for Crossplane to fetch the admin password's Secret firebolt/inst-admin)",
		},
		"AdminSecretMissing": {
			mutate: func(in *Inputs) { in.Instance.AdminSecret = composite.SecretFacts{Resolved: true} },
			status: metav1.ConditionFalse, message: ref + "its authentication is not ready (the admin password's Secret firebolt/inst-admin does not exist)",
		},
		"AdminKeyEmpty": {
			mutate: func(in *Inputs) { in.Instance.AdminSecret.KeyNonEmpty = false },
			status: metav1.ConditionFalse, message: ref + `its authentication is not ready (the admin password's Secret firebolt/inst-admin has no non-empty key "password")`,
		},
		"AdminSecretNameInvalid": {
			mutate: func(in *Inputs) {
				in.Instance.Spec.Auth.Local.Admin.Password.Name = "Not_A/Secret" + strings.Repeat("x", 300)
			},
			status:  metav1.ConditionFalse,
			message: ref + `its authentication is not ready (spec.auth.local.admin.password: name "Not_A/Secret` + strings.Repeat("x", 52) + `…" is not a Secret name)`,
		},
		"AdminSecretKeyInvalid": {
			mutate:  func(in *Inputs) { in.Instance.Spec.Auth.Local.Admin.Password.Key = "../etc" },
			status:  metav1.ConditionFalse,
			message: ref + `its authentication is not ready (spec.auth.local.admin.password: key "../etc" is not a Secret key)`,
		},
		"NoLocal": {
			mutate: func(in *Inputs) { in.Instance.Spec.Auth.Local = nil },
			status: metav1.ConditionFalse, message: ref + "its authentication is not ready (spec.auth.local.admin.password is not set)",
		},
		// Waiting for the Secret is only waiting when nothing else is
		// wrong.
		"MetadataAndAuthNotReady": {
			mutate: func(in *Inputs) {
				in.Instance.Status.MetadataReady = false
				in.Instance.AdminSecret = composite.SecretFacts{}
			},
			status:  metav1.ConditionFalse,
			message: ref + "its metadata service is not ready (status.metadataReady is false); its authentication is not ready (waiting for Crossplane to fetch the admin password's Secret firebolt/inst-admin)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := testInputs(t, "stable", 0, 0)
			withAuth(&in)
			tc.mutate(&in)
			s := evaluateInstance(in)
			c := instanceReady(s)
			want := Condition{Type: TypeInstanceReady, Status: tc.status, Reason: ReasonInstanceNotReady, Message: BoundMessage(tc.message)}
			if tc.status == metav1.ConditionTrue {
				want.Reason = ReasonInstanceReady
			}
			if diff := cmp.Diff(want, c); diff != "" {
				t.Errorf("InstanceReady: -want, +got:\n%s", diff)
			}
			if len(c.Message) > MaxMessageBytes {
				t.Errorf("InstanceReady message is %d bytes, more than %d", len(c.Message), MaxMessageBytes)
			}
			if got := s.Auth != nil; got != tc.auth {
				t.Errorf("renders auth: got %t, want %t", got, tc.auth)
			}
			if tc.auth && s.Auth.Hash() != wantAuth(in).Hash() {
				t.Errorf("auth hash %s, want %s", s.Auth.Hash(), wantAuth(in).Hash())
			}
		})
	}
}

// wantAuth is the auth the instance gives the engines of in.
func wantAuth(in Inputs) signing.EngineAuth {
	a, _ := signing.ForEngine("inst", in.Instance.Spec.Auth, in.Instance.Status.Auth, in.Instance.AdminSecret.ResourceVersion)
	return a
}

// TestComputeAuthGate: while the instance's auth is not ready, an engine
// at rest or creating keeps exactly what it runs, as for an instance that
// is not ready; once it is, a serving generation without auth is replaced
// by one with it.
func TestComputeAuthGate(t *testing.T) {
	notReady := func(in *Inputs) {
		withAuth(in)
		in.Instance.AuthReady.Status, in.Instance.AuthReady.Reason = metav1.ConditionFalse, "SigningKeyPending"
	}
	cases := map[string]struct {
		in   func(t *testing.T) Inputs
		want summary
	}{
		"StableGatedByAuthKeepsServing": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				notReady(&in)
				return in
			},
			want: summary{
				Phase: "stable", Current: 0, Active: 0, ObservedGeneration: 2, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/InstanceNotReady", InstanceReady: "False/InstanceNotReady", TTL: 10 * time.Second,
			},
		},
		"StableGatedByTheAdminSecretKeepsServing": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				withAuth(&in)
				in.Instance.AdminSecret = composite.SecretFacts{Resolved: true}
				return in
			},
			want: summary{
				Phase: "stable", Current: 0, Active: 0, ObservedGeneration: 2, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/InstanceNotReady", InstanceReady: "False/InstanceNotReady", TTL: 10 * time.Second,
			},
		},
		"StoppedGatedByAuth": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 2, replicasSpec(0))
				in.Status.Phase = "stopped"
				notReady(&in)
				return in
			},
			want: summary{
				Phase: "stopped", Current: 2, Active: 2, ObservedGeneration: 2, Renderings: []int{2},
				Resources: merge(gen(2, true, true), route(true)), Route: 2,
				EngineReady: "False/InstanceNotReady", InstanceReady: "False/InstanceNotReady", TTL: 10 * time.Second,
			},
		},
		"CreatingGatedByAuthRecordsNothing": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				notReady(&in)
				return in
			},
			want: summary{
				Phase: "creating", Current: 0, Active: -1, ObservedGeneration: 2,
				Resources: map[resource.Name]bool{}, Route: -1,
				EngineReady: "False/InstanceNotReady", InstanceReady: "False/InstanceNotReady", TTL: 30 * time.Second,
			},
		},
		"StableWithoutAuthRollsOnceItIsReady": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				withAuth(&in)
				return in
			},
			want: summary{
				Phase: "creating", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"NewGeneration"}, TTL: time.Second,
			},
		},
		// The admin password's Secret was written: pods read the password
		// at start, so a new generation.
		"AdminSecretVersionRollsANewGeneration": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "stable", 0, 0)
				withAuth(&in)
				withGeneration(&in, 0, baseSpec(), pods{2, 2})
				withRoute(&in, 0)
				in.Instance.AdminSecret.ResourceVersion = "8"
				return in
			},
			want: summary{
				Phase: "creating", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"NewGeneration"}, TTL: time.Second,
			},
		},
		// Under rollout: phased the same change is one of the pod template
		// (its auth-hash annotation), so the pods restart in place, one at
		// a time.
		"AdminSecretVersionUnderPhasedUpdatesInPlace": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "stable", 0, 0)
				withAuth(&in)
				in.Spec.Rollout = v1alpha1.RolloutPhased
				withGeneration(&in, 0, in.Spec, pods{2, 2})
				withRoute(&in, 0)
				in.Instance.AdminSecret.ResourceVersion = "8"
				return in
			},
			want: summary{
				Phase: "updating", Current: 0, Active: 0, ObservedGeneration: 2, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"UpdatingInPlace"}, TTL: time.Second,
			},
		},
		"StableWithAuthStaysStable": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "stable", 0, 0)
				withAuth(&in)
				withGeneration(&in, 0, baseSpec(), pods{2, 2})
				withRoute(&in, 0)
				return in
			},
			want: summary{
				Phase: "stable", Current: 0, Active: 0, ObservedGeneration: 3, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "True/EngineReady", InstanceReady: "True/InstanceReady", Ready: true, TTL: stableTTL,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := summarize(Compute(tc.in(t), Signals{}, testNow))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}

// authRender renders generation 2 of a two-replica engine, with auth a
// (nil: none).
func authRender(t *testing.T, a *signing.EngineAuth) GenerationObjects {
	t.Helper()
	in := testInputs(t, "creating", 2, 1)
	inst := evaluateInstance(in)
	return renderGeneration(renderInput{
		Engine: in.Engine, Namespace: in.Namespace, Gen: 2, Spec: in.Spec,
		InstanceID: inst.ID, MetadataEndpoint: inst.MetadataEndpoint, Images: in.Config.Images, Auth: a,
	})
}

func testEngineAuth(t *testing.T) *signing.EngineAuth {
	t.Helper()
	in := testInputs(t, "stable", 0, 0)
	withAuth(&in)
	a := wantAuth(in)
	return &a
}

// TestRenderAuth: with auth, config.yaml's instance.auth is the
// instance's configuration, the engine container mounts the credentials
// read-only from their Secrets, and the StatefulSet and its pods carry the
// auth hash; without, none of it.
func TestRenderAuth(t *testing.T) {
	a := testEngineAuth(t)
	with, without := authRender(t, a), authRender(t, nil)

	config := func(objs GenerationObjects) map[string]any {
		s, _, _ := unstructured.NestedString(objs.ConfigMap, "data", ConfigKey)
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	auth, ok, _ := unstructured.NestedMap(config(with), "instance", "auth")
	if !ok {
		t.Fatal("config.yaml has no instance.auth with auth")
	}
	wantConfig := map[string]any{}
	b, _ := yaml.Marshal(a.Config())
	if err := yaml.Unmarshal(b, &wantConfig); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantConfig, auth); diff != "" {
		t.Errorf("instance.auth: -want, +got:\n%s", diff)
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(config(without), "instance", "auth"); ok {
		t.Error("config.yaml has instance.auth without auth")
	}

	pod := func(objs GenerationObjects) corev1.PodTemplateSpec {
		var sts struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Spec     struct {
				Template corev1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		if err := composite.Decode(objs.StatefulSet, &sts); err != nil {
			t.Fatal(err)
		}
		sts.Spec.Template.Annotations = mergeMaps(sts.Spec.Template.Annotations, map[string]string{"sts/" + signing.AnnotationAuthHash: sts.Metadata.Annotations[signing.AnnotationAuthHash]})
		return sts.Spec.Template
	}
	p, q := pod(with), pod(without)
	engineOf := func(p corev1.PodTemplateSpec) corev1.Container {
		return *podtemplate.PrimaryContainer(&p, podtemplate.EngineContainer)
	}
	if diff := cmp.Diff(append(engineOf(q).VolumeMounts, a.Mounts()...), engineOf(p).VolumeMounts); diff != "" {
		t.Errorf("engine mounts: -want, +got:\n%s", diff)
	}
	for _, m := range engineOf(p).VolumeMounts {
		if strings.HasPrefix(m.MountPath, "/secrets/") && !m.ReadOnly {
			t.Errorf("credential mount %s is writable", m.MountPath)
		}
	}
	if diff := cmp.Diff(append(q.Spec.Volumes, a.Volumes()...), p.Spec.Volumes); diff != "" {
		t.Errorf("pod volumes: -want, +got:\n%s", diff)
	}
	if got := p.Annotations; got[signing.AnnotationAuthHash] != a.Hash() || got["sts/"+signing.AnnotationAuthHash] != a.Hash() {
		t.Errorf("auth-hash annotations of the pod template and the StatefulSet: %v, want both %s", got, a.Hash())
	}
	if got := q.Annotations; got[signing.AnnotationAuthHash] != "" || got["sts/"+signing.AnnotationAuthHash] != "" {
		t.Errorf("auth-hash annotations without auth: %v", got)
	}
	// Only the auth differs: the rest renders as without it.
	p.Spec.Volumes, q.Spec.Volumes = nil, nil
	p.Annotations, q.Annotations = nil, nil
	for i := range p.Spec.Containers {
		p.Spec.Containers[i].VolumeMounts, q.Spec.Containers[i].VolumeMounts = nil, nil
	}
	if diff := cmp.Diff(q, p); diff != "" {
		t.Errorf("auth changed more of the pod than its credentials: -without, +with:\n%s", diff)
	}
	if diff := cmp.Diff(without.Headless, with.Headless); diff != "" {
		t.Errorf("auth changed the headless Service: -without, +with:\n%s", diff)
	}
	// The whole rendering, for review.
	in := testInputs(t, "creating", 2, 1)
	withAuth(&in)
	renderGolden(t, "auth", in, 2)
}

func mergeMaps(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// TestRenderedHashFollowsAuth: a change of what the engines run (the key
// set, a key's public key, the admin Secret's version, the auth settings)
// changes the rendering, so the normal drift path rolls a new generation;
// a change of the rotation's timing alone does not.
func TestRenderedHashFollowsAuth(t *testing.T) {
	base := func(t *testing.T) Inputs {
		in := testInputs(t, "stable", 0, 0)
		withAuth(&in)
		return in
	}
	hash := func(in Inputs) string {
		m := newMachine(in, Signals{})
		if !m.canRender() {
			t.Fatalf("cannot render: %s", m.instance.Message)
		}
		return renderedHash(m.renderInput(0))
	}
	want := hash(base(t))
	cases := map[string]struct {
		mutate func(*Inputs)
		same   bool
	}{
		"AuthOff": {mutate: func(in *Inputs) { in.Instance.Spec.Auth = nil }},
		"KeyMinted": {mutate: func(in *Inputs) {
			in.Instance.Status.Auth.SigningKeyGeneration = 2
			in.Instance.Status.Auth.SigningKeys = append(in.Instance.Status.Auth.SigningKeys, testSigningKey(2, v1alpha1.SigningKeyValidationOnly, strings.Repeat("cd", 32)))
		}},
		"PublicKeyChanged": {mutate: func(in *Inputs) {
			in.Instance.Status.Auth.SigningKeys[0].ObservedPublicKeyFingerprint = strings.Repeat("ef", 32)
		}},
		"AdminSecretVersion": {mutate: func(in *Inputs) { in.Instance.AdminSecret.ResourceVersion = "8" }},
		"AdminName":          {mutate: func(in *Inputs) { in.Instance.Spec.Auth.Local.Admin.Name = "root" }},
		"TokenExpiry":        {mutate: func(in *Inputs) { in.Instance.Spec.Auth.Local.TokenExpiry = "2h" }},
		"RotationInterval": {same: true, mutate: func(in *Inputs) {
			in.Instance.Spec.Auth.Local.SigningKeys.RotationInterval = &metav1.Duration{Duration: time.Hour}
		}},
		"RetainDuration": {same: true, mutate: func(in *Inputs) {
			in.Instance.Spec.Auth.Local.SigningKeys.RetainDuration = &metav1.Duration{Duration: 72 * time.Hour}
		}},
		"RotationOff": {same: true, mutate: func(in *Inputs) {
			in.Instance.Spec.Auth.Local.SigningKeys.RotationInterval, in.Instance.Spec.Auth.Local.SigningKeys.RetainDuration = nil, nil
		}},
		// A removing key is rendered no more, as if it were gone.
		"RemovingKeyListed": {same: true, mutate: func(in *Inputs) {
			in.Instance.Status.Auth.SigningKeyGeneration = 2
			in.Instance.Status.Auth.SigningKeys = append(in.Instance.Status.Auth.SigningKeys, testSigningKey(2, v1alpha1.SigningKeyRemoving, strings.Repeat("cd", 32)))
		}},
		"PendingRotationStep": {same: true, mutate: func(in *Inputs) {
			in.Instance.Status.Auth.PendingRotationStep = v1alpha1.RotationAwaitingPromotion
			in.Instance.Status.Auth.LaggingEngines = []string{"etl"}
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := base(t)
			tc.mutate(&in)
			got := hash(in)
			if (got == want) != tc.same {
				t.Errorf("rendered hash %s, unchanged %s: want same=%t", got, want, tc.same)
			}
			// The memo answers as rendering afresh would.
			m := newMachine(in, Signals{})
			if fresh := record(0, renderGeneration(m.renderInput(0))).Hash; fresh != got {
				t.Errorf("memo answered %s, rendering gives %s", got, fresh)
			}
		})
	}
}

// TestRenderMemoCopiesAuth: an entry keeps its own copy of the auth it
// answers for.
func TestRenderMemoCopiesAuth(t *testing.T) {
	in := testInputs(t, "stable", 0, 0)
	withAuth(&in)
	m := newMachine(in, Signals{})
	r := m.renderInput(0)
	renderedHash(r)
	r.Auth.Keys[0].ObservedPublicKeyFingerprint = strings.Repeat("99", 32)
	r.Auth.Spec.Local.Admin.Name = "other"
	if got, want := renderedHash(r), record(0, renderGeneration(r)).Hash; got != want {
		t.Errorf("after the caller mutated its auth: memo answered %s, want %s", got, want)
	}
}

// TestObservedAuthHash: status.observedAuthHash is the auth hash of the
// active generation's recorded StatefulSet, written at rest only, and the
// routing Service publishes it; during a rollout the previous value stays.
func TestObservedAuthHash(t *testing.T) {
	a := testEngineAuth(t)
	const prev = "0123456789abcdef"
	withAuthGeneration := func(t *testing.T, phase v1alpha1.EnginePhase, replicas int32) Inputs {
		in := testInputs(t, phase, 0, 0)
		withAuth(&in)
		in.Spec.Replicas = replicas
		withGeneration(&in, 0, in.Spec, pods{int64(replicas), int64(replicas)})
		withRoute(&in, 0)
		in.Status.ObservedAuthHash = prev
		return in
	}
	cases := map[string]struct {
		in   func(t *testing.T) Inputs
		want string
	}{
		"Stable": {in: func(t *testing.T) Inputs { return withAuthGeneration(t, "stable", 2) }, want: a.Hash()},
		"Stopped": {in: func(t *testing.T) Inputs {
			in := withAuthGeneration(t, "stopped", 0)
			return in
		}, want: a.Hash()},
		// Gated, it still publishes what it runs.
		"StableGated": {in: func(t *testing.T) Inputs {
			in := withAuthGeneration(t, "stable", 2)
			in.Instance.AuthReady.Status = metav1.ConditionFalse
			return in
		}, want: a.Hash()},
		// Drift starts a rollout: the serving generation's hash is kept
		// until the new one serves and the engine is at rest again.
		"StableStartsARollout": {in: func(t *testing.T) Inputs {
			in := withAuthGeneration(t, "stable", 2)
			in.Instance.AdminSecret.ResourceVersion = "8"
			return in
		}, want: prev},
		"Creating": {in: func(t *testing.T) Inputs {
			in := withAuthGeneration(t, "creating", 2)
			in.Status.CurrentGeneration = 1
			return in
		}, want: prev},
		"Draining": {in: func(t *testing.T) Inputs {
			in := rollingAt(t, "draining", 0, baseSpec(), imageSpec("ghcr.io/firebolt-db/engine:v2"))
			in.Status.ActiveGeneration, in.Status.DrainingGeneration = 1, intp(0)
			in.Status.ObservedAuthHash = prev
			return in
		}, want: prev},
		"HostilePreviousIsDropped": {in: func(t *testing.T) Inputs {
			in := withAuthGeneration(t, "creating", 2)
			in.Status.CurrentGeneration = 1
			in.Status.ObservedAuthHash = strings.Repeat("x", 64)
			return in
		}},
		// A generation without auth runs none: nothing to vouch for.
		"StableWithoutAuth": {in: func(t *testing.T) Inputs {
			in := stableAt(t, 0, baseSpec())
			in.Status.ObservedAuthHash = prev
			return in
		}},
		// Cleaning ends the rollout: the new generation's hash.
		"CleaningEnds": {in: func(t *testing.T) Inputs {
			in := testInputs(t, "cleaning", 1, 1)
			withAuth(&in)
			withGeneration(&in, 1, in.Spec, pods{2, 2})
			withRoute(&in, 1)
			in.Status.DrainingGeneration = intp(0)
			return in
		}, want: a.Hash()},
		// A recording that fails its checks vouches for nothing.
		"StableWithARejectedRecording": {in: func(t *testing.T) Inputs {
			in := withAuthGeneration(t, "stable", 2)
			in.Renderings[0] = Recording{Generation: 0, Err: fmt.Errorf("forged")}
			in.Instance.AuthReady.Status = metav1.ConditionFalse
			return in
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := Compute(tc.in(t), Signals{}, testNow)
			if p.Status.ObservedAuthHash != tc.want {
				t.Errorf("status.observedAuthHash %q, want %q (phase %s)", p.Status.ObservedAuthHash, tc.want, p.Status.Phase)
			}
			svc, ok := p.Resources[RoutingServiceKey]
			if !ok {
				t.Fatal("no routing Service")
			}
			u := unstructured.Unstructured{Object: svc.Object}
			if got := u.GetAnnotations()[contract.AnnotationObservedAuthHash]; got != tc.want {
				t.Errorf("routing Service annotation %q, want %q", got, tc.want)
			}
			if tc.want == "" && u.GetAnnotations() != nil {
				t.Errorf("routing Service annotations %v, want none", u.GetAnnotations())
			}
			if l := u.GetLabels(); l[contract.LabelInstanceRef] != "inst" || l[contract.LabelComponent] != contract.ComponentEngineRouting {
				t.Errorf("routing Service labels %v, want the instance's and the component's", l)
			}
		})
	}
}

// TestRoutingServiceMemoKeysEverything: the memo answers for exactly the
// instance and the hash it rendered, in the generation's one slot.
func TestRoutingServiceMemoKeysEverything(t *testing.T) {
	t.Cleanup(routingMemo.clear)
	base := Routing{Engine: "memo-keys", Namespace: "firebolt", Gen: 1, Instance: "inst"}
	variants := []Routing{
		base,
		{Engine: "memo-keys", Namespace: "firebolt", Gen: 1, Instance: "inst", ObservedAuthHash: "0123456789abcdef"},
		{Engine: "memo-keys", Namespace: "firebolt", Gen: 1, Instance: "inst", ObservedAuthHash: "fedcba9876543210"},
		{Engine: "memo-keys", Namespace: "firebolt", Gen: 1, Instance: "other"},
		base,
	}
	for i, r := range variants {
		if diff := cmp.Diff(renderRoutingService(r), RenderRoutingService(r)); diff != "" {
			t.Errorf("variant %d: memo -want, +got:\n%s", i, diff)
		}
	}
	n := 0
	for _, e := range routingMemo.values() {
		if e.r.Engine == "memo-keys" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the memo holds %d entries for one generation, want 1", n)
	}
}

// TestRoutingServiceRefusesWhatItCannotCarry: an instance reference that
// is no label value (no instance can be called so) and a hash that is no
// hash are left off rather than making the Service unappliable.
func TestRoutingServiceRefusesWhatItCannotCarry(t *testing.T) {
	got := renderRoutingService(Routing{Engine: "demo", Namespace: "firebolt", Gen: 0, Instance: strings.Repeat("i", 64), ObservedAuthHash: "not a hash"})
	u := unstructured.Unstructured{Object: got}
	want := map[string]string{LabelEngine: "demo", contract.LabelComponent: contract.ComponentEngineRouting}
	if diff := cmp.Diff(want, u.GetLabels()); diff != "" {
		t.Errorf("labels: -want, +got:\n%s", diff)
	}
	if a := u.GetAnnotations(); a != nil {
		t.Errorf("annotations %v, want none", a)
	}
}

// TestKeptRoutingServicePublishes: a routing Service kept where it is
// (nothing routes while no generation is active) still carries the labels
// and the hash the instance lists it by, and keeps its selector.
func TestKeptRoutingServicePublishes(t *testing.T) {
	obs := renderRoutingService(Routing{Engine: "demo", Namespace: "firebolt", Gen: 4})
	obs["metadata"].(map[string]any)["annotations"] = map[string]any{contract.AnnotationObservedAuthHash: "fedcba9876543210", "other": "kept"}
	delete(obs["metadata"].(map[string]any)["labels"].(map[string]any), contract.LabelComponent)
	got := keptRoutingService(obs, Routing{Engine: "demo", Namespace: "firebolt", Gen: -1, Instance: "inst", ObservedAuthHash: "0123456789abcdef"})
	u := unstructured.Unstructured{Object: got}
	if diff := cmp.Diff(map[string]string{LabelEngine: "demo", contract.LabelComponent: contract.ComponentEngineRouting, contract.LabelInstanceRef: "inst"}, u.GetLabels()); diff != "" {
		t.Errorf("labels: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{contract.AnnotationObservedAuthHash: "0123456789abcdef", "other": "kept"}, u.GetAnnotations()); diff != "" {
		t.Errorf("annotations: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(generationLabels("demo", 4), mustStringMap(t, got, "spec", "selector")); diff != "" {
		t.Errorf("selector moved: -want, +got:\n%s", diff)
	}
	got = keptRoutingService(obs, Routing{Engine: "demo", Namespace: "firebolt", Gen: -1, Instance: "inst"})
	if diff := cmp.Diff(map[string]string{"other": "kept"}, (&unstructured.Unstructured{Object: got}).GetAnnotations()); diff != "" {
		t.Errorf("annotations without a hash: -want, +got:\n%s", diff)
	}
	if _, ok := obs["metadata"].(map[string]any)["labels"].(map[string]any)[contract.LabelComponent]; ok {
		t.Error("keptRoutingService modified the observed object")
	}
}

func mustStringMap(t *testing.T, obj map[string]any, path ...string) map[string]string {
	t.Helper()
	m, _, err := unstructured.NestedStringMap(obj, path...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAuthRequirements: the admin password's Secret is required while the
// instance enables auth and names a Secret that can exist, and only then.
func TestAuthRequirements(t *testing.T) {
	want := Requirement{APIVersion: "v1", Kind: "Secret", Name: "inst-admin", Namespace: "firebolt"}
	cases := map[string]struct {
		mutate func(*Inputs)
		want   *Requirement
	}{
		"Enabled":      {mutate: withAuth, want: &want},
		"Off":          {mutate: func(*Inputs) {}},
		"Disabled":     {mutate: func(in *Inputs) { withAuth(in); in.Instance.Spec.Auth.Enabled = false }},
		"InstanceGone": {mutate: func(in *Inputs) { withAuth(in); in.Instance.Found = false }},
		// Required before AuthReady is True: its version is part of what
		// the engine will render.
		"AuthNotReady": {mutate: func(in *Inputs) { withAuth(in); in.Instance.AuthReady = nil }, want: &want},
		"InvalidName": {mutate: func(in *Inputs) {
			withAuth(in)
			in.Instance.Spec.Auth.Local.Admin.Password.Name = "a/b"
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := testInputs(t, "stable", 0, 0)
			tc.mutate(&in)
			got, ok := requirements(in)[RequirementAdminSecret]
			if (tc.want != nil) != ok {
				t.Fatalf("admin Secret required: %t, want %t", ok, tc.want != nil)
			}
			if tc.want != nil && got != *tc.want {
				t.Errorf("requirement %+v, want %+v", got, *tc.want)
			}
		})
	}
}

// TestAuthRequirementsFetched: a check meant to run once per reconcile
// waits for the call that carries the admin password's Secret too.
func TestAuthRequirementsFetched(t *testing.T) {
	in := testInputs(t, "stable", 0, 0)
	withAuth(&in)
	if !in.requirementsFetched() {
		t.Error("everything fetched: want true")
	}
	in.Instance.AdminSecret.Resolved = false
	if in.requirementsFetched() {
		t.Error("the admin Secret not fetched yet: want false")
	}
	in.Instance.Spec.Auth = nil
	if !in.requirementsFetched() {
		t.Error("without auth the Secret is not required: want true")
	}
}

// TestTemplatesMayNotReachTheAdminPassword: with the instance's auth on,
// a template that mounts its admin password's Secret is refused, as the
// instance's other credentials are.
func TestTemplatesMayNotReachTheAdminPassword(t *testing.T) {
	in := testInputs(t, "stable", 0, 0)
	withAuth(&in)
	in.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{
		Name: "peek", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "inst-admin"}},
	}}}}
	r := validate(in)
	if r == nil || r.Reason != ReasonTemplateRejected || !strings.Contains(r.Message, "inst-admin") {
		t.Fatalf("validate: %+v, want TemplateRejected naming inst-admin", r)
	}
	in.Instance.Spec.Auth = nil
	if r := validate(in); r != nil {
		t.Errorf("without auth the Secret is the user's: %+v", r)
	}
}

// TestReadAuth: Read takes the instance's AuthReady condition and, of the
// admin password's Secret Crossplane hands in with its value, only the
// version and whether its key is set.
func TestReadAuth(t *testing.T) {
	req := LoadRequest(t, "stable-auth")
	in, err := Read(callFor(t, req))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(composite.SecretFacts{Resolved: true, Found: true, ResourceVersion: "7", KeyNonEmpty: true}, in.Instance.AdminSecret); diff != "" {
		t.Errorf("admin Secret facts: -want, +got:\n%s", diff)
	}
	if c := in.Instance.AuthReady; c == nil || c.Status != metav1.ConditionTrue || c.Reason != "Ready" {
		t.Errorf("AuthReady %+v, want True/Ready", c)
	}
	data := req.GetRequiredResources()[RequirementAdminSecret].GetItems()[0].GetResource().GetFields()["data"].GetStructValue()
	encoded := data.GetFields()["password"].GetStringValue()
	plain, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(plain) == 0 {
		t.Fatalf("the request carries no password to leak: %q", encoded)
	}
	all := fmt.Sprintf("%#v %#v %#v", in, in.Instance, in.Instance.AuthReady)
	for _, leak := range []string{string(plain), encoded} {
		if strings.Contains(all, leak) {
			t.Errorf("the inputs carry the admin password (%q)", leak)
		}
	}
}
