package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// The rotation of the scenario: tokens live 20 s and a demoted key is kept
// as long; the first key signs 30 s before the next is minted, and once it
// is, the interval is raised to an hour so the walk ends with one key.
const (
	authTokenAge        = 20 * time.Second
	authRotationTimeout = 8 * time.Minute
	authAdminSecret     = "admin-pw"
)

// authSpec is spec.auth of the scenario's instance: an admin logging in
// with the password of authAdminSecret, ES384 keys from the stack's CA
// ClusterIssuer, and, with an interval, a rotation.
func authSpec(interval string) map[string]any {
	keys := map[string]any{"certManager": map[string]any{
		"issuerRef": map[string]any{"name": harness.CAIssuer, "kind": "ClusterIssuer"}, "algorithm": "ECDSA", "size": int64(384),
	}}
	if interval != "" {
		keys["rotationInterval"], keys["retainDuration"] = interval, "20s"
	}
	return map[string]any{"enabled": true, "local": map[string]any{
		"admin":            map[string]any{"name": "firebolt", "password": map[string]any{"name": authAdminSecret, "key": "password"}},
		"signingAlgorithm": "ES384", "maxTokenAge": "20s", "clockSkewTolerance": "0s", "signingKeys": keys,
	}}
}

// liveGeneration is what one generation of an engine runs: the signing keys
// of its config.yaml (the signer first) and the Secrets its pods mount.
type liveGeneration struct {
	engine  string
	gen     int64
	keys    []string
	secrets []string
}

func (g liveGeneration) String() string {
	return fmt.Sprintf("%s-g%d%v", g.engine, g.gen, g.keys)
}

// authView is one observation of the instance's auth: its status and
// AuthReady, every live generation of its engines and which signing
// Certificates and Secrets exist.
type authView struct {
	keys      []map[string]any
	step      string
	ready     harness.Cond
	gens      []liveGeneration
	certs     map[string]bool
	secrets   map[string]bool
	observeAt time.Time
}

func (v authView) phases() string {
	out := make([]string, 0, len(v.keys))
	for _, k := range v.keys {
		out = append(out, fmt.Sprintf("%v=%v", k["id"], k["phase"]))
	}
	// Status lists the keys oldest first; sorting keeps the view
	// independent of that.
	slices.Sort(out)
	return strings.Join(out, ",")
}

// TestAuthRotatesWithoutAValidationGap: an instance with auth and two
// engines reaches AuthReady=True with real cert-manager; the engines' pods
// mount the signing Secret and the admin password and their config.yaml
// names them; a rotation walks mint, promote, retire and remove with both
// engines rolled in between, and at every observation no live generation
// of any engine lacks a key another live generation signs with, and no
// generation runs a key whose Certificate or Secret is gone; turning auth
// off rolls the engines back and deletes the Certificates.
func TestAuthRotatesWithoutAValidationGap(t *testing.T) {
	s := newScenario(t, "auth-rotation")
	ctx := s.ctx
	_, err := cp.Kube.CoreV1().Secrets(s.ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: authAdminSecret},
		StringData: map[string]string{"password": "e2e-admin-password"},
	}, metav1.CreateOptions{})
	s.must(err)

	inst := s.instance("demo")
	set(t, inst, authSpec(""), "spec", "auth")
	s.apply(inst)
	s.waitInstanceReady(inst)
	s.waitAuthReady(inst, "Ready")

	engines := []*unstructured.Unstructured{s.engine("e1", "demo", "", 1), s.engine("e2", "demo", "", 1)}
	for _, e := range engines {
		s.apply(e)
	}
	for _, e := range engines {
		s.waitStable(e, -1)
	}
	v := s.authView(inst)
	if len(v.gens) != 2 {
		t.Fatalf("want one live generation per engine, got %v", v.gens)
	}
	for _, g := range v.gens {
		if !slices.Equal(g.keys, []string{"signing-1"}) || !slices.Equal(g.secrets, []string{authAdminSecret, "demo-auth-signing"}) {
			t.Errorf("%s runs keys %v and mounts %v; want signing-1 and Secrets %s, demo-auth-signing", g, g.keys, g.secrets, authAdminSecret)
		}
	}
	s.checkMounts(v.gens[0])

	// The rotation: every observation is checked, and the walk must pass
	// through each step with both engines on a new generation between
	// steps.
	set(t, inst, authSpec("30s"), "spec", "auth")
	s.apply(inst)
	lastSigned := map[string]time.Time{}
	var seen []string
	rolled := map[string]map[string]int64{} // phases → engine → active generation
	earliest := map[string]int64{}          // engine → the generation it ran when the rotation started
	s.wait(authRotationTimeout, "a rotation from signing-1 to signing-2, through to removing signing-1", func(context.Context) (bool, string, error) {
		v := s.authView(inst)
		if err := checkNoGap(v, lastSigned); err != nil {
			return false, "", err
		}
		p := v.phases()
		if len(seen) == 0 || seen[len(seen)-1] != p {
			seen = append(seen, p)
			rolled[p] = map[string]int64{}
			if p == "signing-1=Active,signing-2=ValidationOnly" {
				set(t, inst, authSpec("1h"), "spec", "auth")
				s.apply(inst)
			}
		}
		for _, g := range v.gens {
			rolled[p][g.engine] = max(rolled[p][g.engine], g.gen)
			if _, ok := earliest[g.engine]; !ok {
				earliest[g.engine] = g.gen
			}
		}
		return p == "signing-2=Active" && !v.certs["demo-auth-signing"] && len(v.gens) == 2,
			fmt.Sprintf("keys %s step %q AuthReady=%s generations %v", p, v.step, v.ready, v.gens), nil
	})
	// Stop rotating: a change of the timings alone rolls nothing.
	set(t, inst, authSpec(""), "spec", "auth")
	s.apply(inst)
	want := []string{"signing-1=Active", "signing-1=Active,signing-2=ValidationOnly", "signing-1=ValidationOnly,signing-2=Active",
		"signing-1=Removing,signing-2=Active", "signing-2=Active"}
	if !slices.Equal(seen, want) {
		t.Errorf("the rotation went through %v, want %v", seen, want)
	}
	// Each of the first three transitions changes every engine's keys and
	// rolls it (removing a key from status once no engine runs it changes
	// none). Engines read the keys from the ConfigMap the instance
	// composes, which Crossplane applies just before it writes the
	// instance's status, so an engine may roll for a step while this test
	// still reads the step before: a roll can show up one step early, but
	// generations never go back and each transition adds one.
	for _, e := range []string{"e1", "e2"} {
		for i := 1; i < len(seen); i++ {
			if rolled[seen[i]][e] < rolled[seen[i-1]][e] {
				t.Errorf("engine %s ran generation %d at %s and %d at %s: generations went back", e, rolled[seen[i-1]][e], seen[i-1], rolled[seen[i]][e], seen[i])
			}
		}
		if len(seen) == len(want) {
			first, last := earliest[e], rolled[seen[3]][e]
			if last < first+3 {
				t.Errorf("engine %s ran generation %d when the rotation started and %d at %s: want a roll for each of the three steps between",
					e, first, last, seen[3])
			}
		}
	}
	t.Logf("rotation steps %v; generations per step %v", seen, rolled)
	s.wait(time.Minute, "signing-1's Secret deleted with its Certificate", func(ctx context.Context) (bool, string, error) {
		_, err := cp.Kube.CoreV1().Secrets(s.ns).Get(ctx, "demo-auth-signing", metav1.GetOptions{})
		return kerrors.IsNotFound(err), harness.SeenErr(err), nil
	})

	// Auth off: the engines roll to a configuration without it, and the
	// Certificate goes once no engine runs a key.
	unstructured.RemoveNestedField(inst.Object, "spec", "auth")
	set(t, inst, map[string]any{"enabled": false}, "spec", "auth")
	s.apply(inst)
	s.waitAuthReady(inst, "Disabled")
	s.wait(rolloutTimeout, "both engines off auth and the signing Certificates deleted", func(context.Context) (bool, string, error) {
		v := s.authView(inst)
		if err := checkNoGap(v, lastSigned); err != nil {
			return false, "", err
		}
		for _, g := range v.gens {
			if len(g.keys) > 0 || len(g.secrets) > 0 {
				return false, fmt.Sprintf("generation %v still runs auth (Secrets %v)", g, g.secrets), nil
			}
		}
		return len(v.gens) == 2 && len(v.certs) == 0, fmt.Sprintf("generations %v certificates %v", v.gens, v.certs), nil
	})
}

// waitAuthReady waits for the instance's AuthReady with reason.
func (s *scenario) waitAuthReady(inst *unstructured.Unstructured, reason string) {
	s.t.Helper()
	s.wait(rolloutTimeout, "FireboltInstance "+inst.GetName()+" AuthReady="+reason, func(context.Context) (bool, string, error) {
		u, err := s.get(inst)
		if err != nil || u == nil {
			return false, fmt.Sprintf("claim: %v", err), nil
		}
		c := harness.Condition(u, "AuthReady")
		return c.Status == "True" && c.Reason == reason, "AuthReady=" + c.String(), nil
	})
}

// authView reads the instance's auth and what its engines run.
func (s *scenario) authView(inst *unstructured.Unstructured) authView {
	s.t.Helper()
	var v authView
	s.wait(time.Minute, "reading the auth of instance "+inst.GetName(), func(ctx context.Context) (bool, string, error) {
		var err error
		v, err = s.readAuthView(ctx, inst)
		return err == nil, harness.SeenErr(err), nil
	})
	return v
}

func (s *scenario) readAuthView(ctx context.Context, inst *unstructured.Unstructured) (authView, error) {
	v := authView{certs: map[string]bool{}, secrets: map[string]bool{}, observeAt: time.Now()}
	u, err := cp.Get(ctx, inst)
	if err != nil {
		return v, err
	}
	keys, _, _ := unstructured.NestedSlice(u.Object, "status", "auth", "signingKeys")
	for _, k := range keys {
		if m, ok := k.(map[string]any); ok {
			v.keys = append(v.keys, m)
		}
	}
	v.step, _, _ = unstructured.NestedString(u.Object, "status", "auth", "pendingRotationStep")
	v.ready = harness.Condition(u, "AuthReady")
	sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).List(ctx, metav1.ListOptions{LabelSelector: labelEngine})
	if err != nil {
		return v, err
	}
	for i := range sts.Items {
		g, err := s.liveGeneration(ctx, &sts.Items[i])
		if err != nil {
			return v, err
		}
		v.gens = append(v.gens, g)
	}
	ri, err := cp.Resource(harness.CertificateGVK, s.ns)
	if err != nil {
		return v, err
	}
	certs, err := ri.List(ctx, metav1.ListOptions{LabelSelector: "firebolt.io/component=auth-signing"})
	if err != nil {
		return v, err
	}
	for _, c := range certs.Items {
		v.certs[c.GetName()] = true
	}
	secrets, err := cp.Kube.CoreV1().Secrets(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "firebolt.io/component=auth-signing"})
	if err != nil {
		return v, err
	}
	for _, sec := range secrets.Items {
		v.secrets[sec.Name] = len(sec.Data[corev1.TLSPrivateKeyKey]) > 0
	}
	return v, nil
}

// liveGeneration reads what a generation's StatefulSet runs: the signing
// keys of its config.yaml and the Secrets its pod template mounts.
func (s *scenario) liveGeneration(ctx context.Context, sts *appsv1.StatefulSet) (liveGeneration, error) {
	g := liveGeneration{engine: sts.Labels[labelEngine]}
	if _, err := fmt.Sscanf(sts.Labels[labelGeneration], "%d", &g.gen); err != nil {
		return g, fmt.Errorf("StatefulSet %s: generation label: %w", sts.Name, err)
	}
	for _, vol := range sts.Spec.Template.Spec.Volumes {
		if vol.Secret != nil && strings.HasPrefix(vol.Name, "auth-") {
			g.secrets = append(g.secrets, vol.Secret.SecretName)
		}
	}
	slices.Sort(g.secrets)
	cm, err := cp.Kube.CoreV1().ConfigMaps(s.ns).Get(ctx, sts.Name+"-config", metav1.GetOptions{})
	if err != nil {
		return g, err
	}
	var cfg struct {
		Instance struct {
			Auth struct {
				Local struct {
					SigningKeys []struct {
						ID string `json:"id"`
					} `json:"signing_keys"`
				} `json:"local"`
			} `json:"auth"`
		} `json:"instance"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &cfg); err != nil {
		return g, fmt.Errorf("ConfigMap %s: %w", cm.Name, err)
	}
	for _, k := range cfg.Instance.Auth.Local.SigningKeys {
		g.keys = append(g.keys, k.ID)
	}
	return g, nil
}

// checkNoGap asserts the rotation's invariants on one observation: every
// key a live generation runs has its Certificate and an issued Secret; the
// key any live generation signs with is one every live generation
// validates; and a key a generation no longer validates signed nothing for
// at least a token's life (lastSigned records when each key was last seen
// signing, which can only be earlier than the truth, so the check cannot
// fail wrongly).
func checkNoGap(v authView, lastSigned map[string]time.Time) error {
	for _, g := range v.gens {
		if len(g.keys) > 0 {
			lastSigned[g.keys[0]] = v.observeAt
		}
		for _, k := range g.keys {
			name := "demo-auth-signing"
			if k != "signing-1" {
				name += "-" + k
			}
			if !v.certs[name] || !v.secrets[name] {
				return fmt.Errorf("%s runs key %s, whose Certificate (%v) or issued Secret (%v) is gone", g, k, v.certs[name], v.secrets[name])
			}
		}
	}
	for _, signer := range v.gens {
		if len(signer.keys) == 0 {
			continue
		}
		for _, o := range v.gens {
			if len(o.keys) > 0 && !slices.Contains(o.keys, signer.keys[0]) {
				return fmt.Errorf("%s signs with %s, which %s does not validate (keys %s)", signer, signer.keys[0], o, v.phases())
			}
		}
	}
	for k, at := range lastSigned {
		for _, o := range v.gens {
			if len(o.keys) > 0 && !slices.Contains(o.keys, k) && v.observeAt.Sub(at) < authTokenAge {
				return fmt.Errorf("%s no longer validates %s, which was seen signing %s ago, less than a token lives (%s)", o, k, v.observeAt.Sub(at).Round(time.Second), authTokenAge)
			}
		}
	}
	return nil
}

// checkMounts checks a pod of the generation mounts the admin password and
// the signing key read-only where config.yaml says.
func (s *scenario) checkMounts(g liveGeneration) {
	s.t.Helper()
	pods := s.pods(g.engine, g.gen)
	if len(pods) == 0 {
		s.t.Fatalf("no pod of %s", g)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, c := range pods[0].Spec.Containers {
		if c.Name != "engine" {
			continue
		}
		for _, m := range c.VolumeMounts {
			mounts[m.MountPath] = m
		}
	}
	for _, path := range []string{"/secrets/auth/admin", "/secrets/auth/signing/signing-1"} {
		if m, ok := mounts[path]; !ok || !m.ReadOnly {
			s.t.Errorf("pod %s: %s mounted=%v read-only=%v", pods[0].Name, path, ok, m.ReadOnly)
		}
	}
}
