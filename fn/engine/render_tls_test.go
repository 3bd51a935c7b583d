package engine

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"pgregory.net/rapid"
	"sigs.k8s.io/yaml"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// testTLS is an instance's engine TLS as the schema defaults it: an
// ECDSA P-384 key from a ClusterIssuer.
func testTLS() *TLS {
	return &TLS{Instance: "inst", Issuer: v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "engine-ca"}, Algorithm: "ECDSA", Size: 384}}
}

// tlsRenderInput is what renderFor renders generation gen of in from,
// with engine TLS tls.
func tlsRenderInput(in Inputs, gen int, tls *TLS) renderInput {
	inst := evaluateInstance(in)
	return renderInput{
		Engine: in.Engine, Namespace: in.Namespace, Gen: gen, Spec: in.Spec, Class: in.classSpec(),
		InstanceID: inst.ID, MetadataEndpoint: inst.MetadataEndpoint,
		CustomConfig: effectiveCustomConfig(in.Spec, in.classSpec()), Images: in.Config.Images,
		Phased: effectivePolicy(in.Spec, in.classSpec()).Rollout == v1alpha1.RolloutPhased,
		Auth:   inst.Auth, TLS: tls,
	}
}

// TestRenderTLSGolden: a TLS generation's objects, whole, with the
// Certificate rendered back from its StatefulSet.
func TestRenderTLSGolden(t *testing.T) {
	for name, mutate := range map[string]func(*Inputs){
		"tls": func(*Inputs) {},
		"tls-ui-sidecar": func(in *Inputs) {
			in.Spec.UISidecar = ptr.To(true)
			in.Config.Images.EngineUI = "registry.example/firebolt-core-ui:1.2.0"
		},
		"auth-tls": withAuth,
	} {
		t.Run(name, func(t *testing.T) {
			in := testInputs(t, "creating", 2, 1)
			mutate(&in)
			r := tlsRenderInput(in, 2, testTLS())
			objs := renderGeneration(r)
			crt, ok, err := certificateOfStatefulSet(objs.StatefulSet, r.Engine, r.Namespace, r.Gen)
			if err != nil || !ok {
				t.Fatalf("certificateOfStatefulSet: ok %t, err %v", ok, err)
			}
			diffGolden(t, name, objs.ConfigMap, objs.Headless, objs.StatefulSet,
				RenderRoutingService(Routing{Engine: in.Engine, Namespace: in.Namespace, Gen: 2, Instance: in.Spec.InstanceRef}), crt)
		})
	}
}

// TestRenderTLSChangesOnlyTLS: TLS changes the StatefulSet by exactly
// the listener's certificate (volume, mount, bundle script), the UI
// sidecar's URL and the engine-tls annotations, with and without the
// sidecar and auth.
func TestRenderTLSChangesOnlyTLS(t *testing.T) {
	const script = `if [ -s /secrets/tls/engine/ca.crt ]; then cat /secrets/tls/engine/tls.crt /secrets/tls/engine/ca.crt; else cat /secrets/tls/engine/tls.crt; fi > /run/firebolt/engine-tls-bundle.crt || exit 1
if [ -z "${POD_INDEX}" ]; then POD_INDEX="${HOSTNAME##*-}"; fi
exec /opt/firebolt/firebolt server --node "${POD_INDEX}" --data-dir /var/lib/firebolt
`
	for name, tc := range map[string]struct {
		ui, auth bool
	}{
		"Plain":           {},
		"UISidecar":       {ui: true},
		"Auth":            {auth: true},
		"AuthWithSidecar": {ui: true, auth: true},
	} {
		t.Run(name, func(t *testing.T) {
			in := testInputs(t, "creating", 2, 1)
			if tc.ui {
				in.Spec.UISidecar = ptr.To(true)
				in.Config.Images.EngineUI = "registry.example/firebolt-core-ui:1.2.0"
			}
			if tc.auth {
				withAuth(&in)
			}
			without := renderStatefulSet(tlsRenderInput(in, 2, nil))
			got := renderStatefulSet(tlsRenderInput(in, 2, testTLS()))

			want := without.DeepCopy()
			if want.Annotations == nil {
				want.Annotations = map[string]string{}
			}
			want.Annotations["firebolt.io/engine-tls-hash"] = "7c4985bbf7e5ca02"
			want.Annotations["firebolt.io/engine-tls"] = `{"instance":"inst","issuer":{"issuerRef":{"name":"engine-ca"},"algorithm":"ECDSA","size":384}}`
			if want.Spec.Template.Annotations == nil {
				want.Spec.Template.Annotations = map[string]string{}
			}
			want.Spec.Template.Annotations["firebolt.io/engine-tls-hash"] = "7c4985bbf7e5ca02"
			pod := &want.Spec.Template.Spec
			engine := &pod.Containers[0]
			engine.Args = []string{script}
			engine.VolumeMounts = append(engine.VolumeMounts, corev1.VolumeMount{Name: "tls-engine", MountPath: "/secrets/tls/engine", ReadOnly: true})
			vol := corev1.Volume{Name: "tls-engine", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "demo-g2-engine-tls", DefaultMode: ptr.To[int32](0o440), Optional: ptr.To(false),
			}}}
			if tc.ui {
				web := &pod.Containers[1]
				web.Env = []corev1.EnvVar{{Name: "FIREBOLT_CORE_URL", Value: "https://localhost:3473"}}
				last := len(pod.Volumes) - 1
				pod.Volumes = append(pod.Volumes[:last:last], vol, pod.Volumes[last])
			} else {
				pod.Volumes = append(pod.Volumes, vol)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("renderStatefulSet with TLS, -want, +got:\n%s", diff)
			}
		})
	}
}

// TestRenderTLSConfig: under TLS, config.yaml's only listener is TLS on
// the query port, whatever a customEngineConfig says of endpoints; without
// TLS, a customEngineConfig cannot set endpoints either.
func TestRenderTLSConfig(t *testing.T) {
	listeners := []any{map[string]any{
		"type": "tcp", "port": float64(3473),
		"tls": map[string]any{"certificate_file": "/run/firebolt/engine-tls-bundle.crt", "private_key_file": "/secrets/tls/engine/tls.key"},
	}}
	hostile := `endpoints: {http: {listeners: [{type: tcp, port: 3473}, {type: tcp, port: 5432}]}, postgres: {port: 5432}}
logging: {format: text}`
	for name, tc := range map[string]struct {
		tls    bool
		engine string
		class  string
		want   any // endpoints; nil: absent
	}{
		"TLS":                          {tls: true, want: map[string]any{"http": map[string]any{"listeners": listeners}}},
		"TLSEngineConfigSetsEndpoints": {tls: true, engine: hostile, want: map[string]any{"http": map[string]any{"listeners": listeners}}},
		"TLSClassConfigSetsEndpoints":  {tls: true, class: hostile, want: map[string]any{"http": map[string]any{"listeners": listeners}}},
		"PlainConfigSetsEndpoints":     {engine: hostile},
	} {
		t.Run(name, func(t *testing.T) {
			in := testInputs(t, "creating", 2, 1)
			if tc.engine != "" {
				in.Spec.CustomEngineConfig = raw(t, tc.engine)
			}
			if tc.class != "" {
				in.Spec.EngineClassRef = ptr.To("big")
				in.Class = foundClass("big", corev1.PodTemplateSpec{})
				in.Class.Spec.CustomEngineConfig = raw(t, tc.class)
			}
			var tls *TLS
			if tc.tls {
				tls = testTLS()
			}
			cm := renderConfigMap(tlsRenderInput(in, 2, tls))
			var cfg map[string]any
			if err := yaml.Unmarshal([]byte(cm.Data[ConfigKey]), &cfg); err != nil {
				t.Fatalf("config.yaml does not parse: %v\n%s", err, cm.Data[ConfigKey])
			}
			if diff := cmp.Diff(tc.want, cfg["endpoints"]); diff != "" {
				t.Errorf("config.yaml endpoints, -want, +got:\n%s", diff)
			}
			if tc.engine != "" || tc.class != "" {
				if got := cfg["logging"]; !cmp.Equal(got, map[string]any{"format": "text"}) {
					t.Errorf("the rest of the custom config was not merged: logging is %v", got)
				}
			}
		})
	}
}

// TestEngineTLSScript runs the bundle step of the engine's script: the
// certificate and its CA, the certificate alone when the CA is empty or
// absent, and no start at all without a certificate.
func TestEngineTLSScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("the engine script runs under bash, which this machine lacks: %v", err)
	}
	const crt, ca = "-----BEGIN CERTIFICATE-----\nleaf\n-----END CERTIFICATE-----\n", "-----BEGIN CERTIFICATE-----\nroot\n-----END CERTIFICATE-----\n"
	for name, tc := range map[string]struct {
		files  map[string]string
		bundle string // "" with fails
		fails  bool
	}{
		"CertificateAndCA": {files: map[string]string{"tls.crt": crt, "ca.crt": ca}, bundle: crt + ca},
		"EmptyCA":          {files: map[string]string{"tls.crt": crt, "ca.crt": ""}, bundle: crt},
		"NoCA":             {files: map[string]string{"tls.crt": crt}, bundle: crt},
		"NoCertificate":    {files: map[string]string{"ca.crt": ca}, fails: true},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			secret, run := filepath.Join(dir, "secret"), filepath.Join(dir, "run")
			for _, d := range []string{secret, run} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for f, content := range tc.files {
				if err := os.WriteFile(filepath.Join(secret, f), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			script := strings.NewReplacer(engineTLSMountPath, secret, runtimeDir, run).Replace(engineTLSScript) + "echo started\n"
			out, err := exec.CommandContext(t.Context(), bash, "-c", script).Output()
			if tc.fails {
				if err == nil || strings.Contains(string(out), "started") {
					t.Errorf("the script went on without a certificate: err %v, output %q", err, out)
				}
				return
			}
			if err != nil || string(out) != "started\n" {
				t.Fatalf("script: err %v, output %q", err, out)
			}
			b, err := os.ReadFile(filepath.Join(run, "engine-tls-bundle.crt"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.bundle, string(b)); diff != "" {
				t.Errorf("bundle, -want, +got:\n%s", diff)
			}
		})
	}
}

// TestEngineTLSHash: the original's engine-tls-hash, of the anchor's
// name and the raw key algorithm and size; the issuer and durations are
// not in it.
func TestEngineTLSHash(t *testing.T) {
	for name, tc := range map[string]struct {
		tls  TLS
		want string
	}{
		"Defaults":     {*testTLS(), "7c4985bbf7e5ca02"},
		"OtherIssuer":  {TLS{Instance: "inst", Issuer: v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "other", Kind: "Issuer"}, Algorithm: "ECDSA", Size: 384, Duration: &metav1.Duration{Duration: time.Hour}}}, "7c4985bbf7e5ca02"},
		"Unset":        {TLS{Instance: "inst"}, "2a066b8b8694f25d"},
		"RSAElsewhere": {TLS{Instance: "firebolt", Issuer: v1alpha1.CertManagerSpec{Algorithm: "RSA", Size: 4096}}, "d20daa408fdc646d"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := engineTLSHash(tc.tls); got != tc.want {
				t.Errorf("engineTLSHash: want %s, got %s", tc.want, got)
			}
		})
	}
}

// TestRenderCertificate: a generation's Certificate has the original's
// name, SANs, usages, key policy and durations, a revision history that
// keeps the previous issue's request, and the labels the instance and the
// engine find it and its CertificateRequests by.
func TestRenderCertificate(t *testing.T) {
	r := renderInput{Engine: "demo", Namespace: "analytics", Gen: 7}
	dur := func(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }
	for name, tc := range map[string]struct {
		issuer      v1alpha1.CertManagerSpec
		alg         string
		size        int64
		issuerKind  string
		duration    string
		renewBefore any // nil: left out
	}{
		"Defaults": {
			issuer: v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "internal-ca"}},
			alg:    "ECDSA", size: 384, issuerKind: "ClusterIssuer", duration: "2160h0m0s", renewBefore: "720h0m0s",
		},
		"RSAFromAnIssuer": {
			issuer: v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "internal-ca", Kind: "Issuer"}, Algorithm: "RSA", Size: 4096},
			alg:    "RSA", size: 4096, issuerKind: "Issuer", duration: "2160h0m0s", renewBefore: "720h0m0s",
		},
		"SpecDurations": {
			issuer: v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "internal-ca"}, Duration: dur(48 * time.Hour), RenewBefore: dur(12 * time.Hour)},
			alg:    "ECDSA", size: 384, issuerKind: "ClusterIssuer", duration: "48h0m0s", renewBefore: "12h0m0s",
		},
		"NonPositiveDurationsDefault": {
			issuer: v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "internal-ca"}, Duration: dur(0), RenewBefore: dur(-time.Hour)},
			alg:    "ECDSA", size: 384, issuerKind: "ClusterIssuer", duration: "2160h0m0s", renewBefore: "720h0m0s",
		},
		"RenewBeforeNotShorterIsLeftOut": {
			issuer: v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "internal-ca"}, Duration: dur(24 * time.Hour), RenewBefore: dur(24 * time.Hour)},
			alg:    "ECDSA", size: 384, issuerKind: "ClusterIssuer", duration: "24h0m0s",
		},
		"ShortDurationDropsDefaultRenewBefore": {
			issuer: v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "internal-ca"}, Duration: dur(720 * time.Hour)},
			alg:    "ECDSA", size: 384, issuerKind: "ClusterIssuer", duration: "720h0m0s",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := renderCertificate(r, TLS{Instance: "firebolt", Issuer: tc.issuer})
			labels := map[string]any{
				"firebolt.io/instance": "firebolt", "firebolt.io/component": "engine-tls",
				"firebolt.io/engine": "demo", "firebolt.io/generation": "7",
			}
			spec := map[string]any{
				"secretName": "demo-g7-engine-tls",
				"dnsNames": []any{
					"*.demo-g7-hl.analytics.svc.cluster.local",
					"demo-service.analytics.svc.cluster.local",
					"localhost",
				},
				"usages":         []any{"server auth"},
				"privateKey":     map[string]any{"rotationPolicy": "Always", "encoding": "PKCS8", "algorithm": tc.alg, "size": tc.size},
				"duration":       tc.duration,
				"issuerRef":      map[string]any{"name": "internal-ca", "kind": tc.issuerKind, "group": "cert-manager.io"},
				"secretTemplate": map[string]any{"labels": labels},
				// The previous issue's request (and its CA) outlives a
				// renewal.
				"revisionHistoryLimit": int64(2),
			}
			if tc.renewBefore != nil {
				spec["renewBefore"] = tc.renewBefore
			}
			want := map[string]any{
				"apiVersion": "cert-manager.io/v1",
				"kind":       "Certificate",
				"metadata":   map[string]any{"name": "demo-g7-engine-tls", "namespace": "analytics", "labels": labels},
				"spec":       spec,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("renderCertificate() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCertificateOfStatefulSet: the Certificate rendered back from a
// generation's StatefulSet, as rendered and as a recording holds it
// (decoded from status), is the one renderCertificate renders for the
// generation; a plaintext generation has none.
func TestCertificateOfStatefulSet(t *testing.T) {
	dur := func(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }
	for name, tls := range map[string]*TLS{
		"Plain":    nil,
		"Defaults": testTLS(),
		"Unset":    {Instance: "inst", Issuer: v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "engine-ca"}}},
		"RSAFromAnIssuerWithDurations": {Instance: "inst", Issuer: v1alpha1.CertManagerSpec{
			IssuerRef: v1alpha1.IssuerRef{Name: "engine-ca", Kind: "Issuer"}, Algorithm: "RSA", Size: 2048,
			Duration: dur(48 * time.Hour), RenewBefore: dur(90 * time.Minute),
		}},
	} {
		t.Run(name, func(t *testing.T) {
			in := testInputs(t, "creating", 5, 4)
			withAuth(&in)
			r := tlsRenderInput(in, 5, tls)
			rec := record(r.Gen, renderGeneration(r)).encoded()
			decoded := decodeRecording(r.Engine, r.Namespace, v1beta1.PodSecurity{}, v1alpha1.GenerationRendering{Generation: r.Gen, Hash: rec.Hash, Objects: rec.Encoded})
			if decoded.Err != nil {
				t.Fatalf("the recording of a TLS generation is rejected: %v", decoded.Err)
			}
			for from, sts := range map[string]map[string]any{"rendered": rec.Objects.StatefulSet, "recorded": decoded.Objects.StatefulSet} {
				got, ok, err := certificateOfStatefulSet(sts, r.Engine, r.Namespace, r.Gen)
				if err != nil {
					t.Fatalf("%s: %v", from, err)
				}
				if isTLS := isTLSStatefulSet(sts); ok != (tls != nil) || isTLS != ok {
					t.Fatalf("%s: certificateOfStatefulSet ok %t, isTLSStatefulSet %t, want %t", from, ok, isTLS, tls != nil)
				}
				if tls == nil {
					continue
				}
				if diff := cmp.Diff(renderCertificate(r, *r.TLS), got); diff != "" {
					t.Errorf("%s: -renderCertificate, +certificateOfStatefulSet:\n%s", from, diff)
				}
			}
		})
	}
}

// TestCertificateOfStatefulSetRefusesHostileAnnotations: whatever the
// annotation holds, an error naming it, never a panic nor a Certificate
// cert-manager would refuse.
func TestCertificateOfStatefulSetRefusesHostileAnnotations(t *testing.T) {
	valid := engineTLSAnnotation(*testTLS())
	withIssuer := func(issuer string) string {
		return `{"instance":"inst","issuer":` + issuer + `}`
	}
	for name, ann := range map[string]any{
		"NotJSON":              "not json",
		"Null":                 "null",
		"Empty":                "",
		"Array":                `[1]`,
		"NotAString":           int64(7),
		"Map":                  map[string]any{"instance": "inst"},
		"UnknownField":         `{"instance":"inst","issuer":{"issuerRef":{"name":"ca"}},"secretName":"x"}`,
		"TrailingData":         valid + `{}`,
		"TooLarge":             valid + strings.Repeat(" ", maxEngineTLSAnnotation),
		"NoInstance":           `{"issuer":{"issuerRef":{"name":"ca"}}}`,
		"InstanceNotALabel":    `{"instance":"in st","issuer":{"issuerRef":{"name":"ca"}}}`,
		"NoIssuerName":         withIssuer(`{"issuerRef":{"name":""}}`),
		"IssuerNameTooLong":    withIssuer(`{"issuerRef":{"name":"` + strings.Repeat("a", 254) + `"}}`),
		"BadKind":              withIssuer(`{"issuerRef":{"name":"ca","kind":"Secret"}}`),
		"BadAlgorithm":         withIssuer(`{"issuerRef":{"name":"ca"},"algorithm":"Ed25519"}`),
		"RSASizeForECDSA":      withIssuer(`{"issuerRef":{"name":"ca"},"algorithm":"ECDSA","size":2048}`),
		"RSAWithoutSize":       withIssuer(`{"issuerRef":{"name":"ca"},"algorithm":"RSA"}`),
		"NegativeSize":         withIssuer(`{"issuerRef":{"name":"ca"},"size":-1}`),
		"SizeOverflow":         withIssuer(`{"issuerRef":{"name":"ca"},"size":99999999999}`),
		"DurationInDays":       withIssuer(`{"issuerRef":{"name":"ca"},"duration":"90d"}`),
		"DurationOverflow":     withIssuer(`{"issuerRef":{"name":"ca"},"duration":"9999999999h"}`),
		"IssuerNotAnObject":    withIssuer(`"ca"`),
		"DeeplyNested":         strings.Repeat("[", 2000),
		"InvalidUTF8":          "{\"instance\":\"\xff\"}",
		"UnterminatedTooLarge": strings.Repeat(`{"instance":"a",`, 400),
	} {
		t.Run(name, func(t *testing.T) {
			sts := map[string]any{"metadata": map[string]any{"annotations": map[string]any{AnnotationEngineTLS: ann}}}
			crt, ok, err := certificateOfStatefulSet(sts, "demo", "firebolt", 3)
			if err == nil || ok || crt != nil {
				t.Fatalf("certificateOfStatefulSet(%.80v): ok %t, err %v, want an error", ann, ok, err)
			}
			if !strings.Contains(err.Error(), AnnotationEngineTLS) {
				t.Errorf("the error does not name the annotation: %v", err)
			}
			if !isTLSStatefulSet(sts) {
				t.Errorf("isTLSStatefulSet: false for a StatefulSet with the annotation")
			}
		})
	}
	for name, sts := range map[string]map[string]any{
		"Nil":                nil,
		"NoMetadata":         {},
		"MetadataNotAMap":    {"metadata": "x"},
		"AnnotationsNotAMap": {"metadata": map[string]any{"annotations": []any{AnnotationEngineTLS}}},
		"OtherAnnotations":   {"metadata": map[string]any{"annotations": map[string]any{AnnotationEngineTLSHash: "7c4985bbf7e5ca02"}}},
	} {
		t.Run(name, func(t *testing.T) {
			crt, ok, err := certificateOfStatefulSet(sts, "demo", "firebolt", 3)
			if err != nil || ok || crt != nil || isTLSStatefulSet(sts) {
				t.Errorf("certificateOfStatefulSet: ok %t, err %v; isTLSStatefulSet %t: want no TLS", ok, err, isTLSStatefulSet(sts))
			}
		})
	}
}

// drawTLS draws an engine TLS the schema admits.
func drawTLS(t *rapid.T) TLS {
	alg := rapid.SampledFrom([]struct {
		alg  string
		size int32
	}{{"", 0}, {"ECDSA", 0}, {"ECDSA", 256}, {"ECDSA", 384}, {"ECDSA", 521}, {"RSA", 2048}, {"RSA", 4096}, {"RSA", 8192}}).Draw(t, "key")
	dur := func(label string) *metav1.Duration {
		if !rapid.Bool().Draw(t, label+"Set") {
			return nil
		}
		return &metav1.Duration{Duration: time.Duration(rapid.Int64Range(-1000, 100000).Draw(t, label)) * time.Minute}
	}
	return TLS{
		Instance: rapid.StringMatching(`[a-z]([a-z0-9-]{0,40}[a-z0-9])?`).Draw(t, "instance"),
		Issuer: v1alpha1.CertManagerSpec{
			IssuerRef: v1alpha1.IssuerRef{
				Name: rapid.StringMatching(`[a-z]([a-z0-9.-]{0,60}[a-z0-9])?`).Draw(t, "issuer"),
				Kind: rapid.SampledFrom([]string{"", "Issuer", "ClusterIssuer"}).Draw(t, "kind"),
			},
			Algorithm: alg.alg, Size: alg.size,
			Duration: dur("duration"), RenewBefore: dur("renewBefore"),
		},
	}
}

// TestCertificateOfStatefulSetRoundTrips: for any TLS the schema admits,
// the Certificate rendered back from the generation's StatefulSet is the
// generation's.
func TestCertificateOfStatefulSetRoundTrips(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tls := drawTLS(rt)
		r := renderInput{
			Engine: "demo", Namespace: "firebolt", Gen: rapid.IntRange(0, 1000).Draw(rt, "gen"),
			Spec: v1alpha1.FireboltEngineSpec{InstanceRef: tls.Instance, Replicas: 1}, TLS: &tls,
		}
		got, ok, err := certificateOfStatefulSet(renderGeneration(r).StatefulSet, r.Engine, r.Namespace, r.Gen)
		if err != nil || !ok {
			rt.Fatalf("ok %t, err %v", ok, err)
		}
		if diff := cmp.Diff(renderCertificate(r, tls), got); diff != "" {
			rt.Fatalf("-renderCertificate, +certificateOfStatefulSet:\n%s", diff)
		}
	})
}

// TestCertificateOfStatefulSetNeverPanics: arbitrary annotations, and
// valid ones with bytes changed, give an error or the Certificate of what
// they decode to.
func TestCertificateOfStatefulSetNeverPanics(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var ann string
		if rapid.Bool().Draw(rt, "mutate") {
			b := []byte(engineTLSAnnotation(drawTLS(rt)))
			for range rapid.IntRange(1, 4).Draw(rt, "edits") {
				b[rapid.IntRange(0, len(b)-1).Draw(rt, "at")] = rapid.Byte().Draw(rt, "byte")
			}
			ann = string(b)
		} else {
			ann = rapid.String().Draw(rt, "annotation")
		}
		sts := map[string]any{"metadata": map[string]any{"annotations": map[string]any{AnnotationEngineTLS: ann}}}
		got, ok, err := certificateOfStatefulSet(sts, "demo", "firebolt", 1)
		if err != nil {
			if ok || got != nil || !strings.Contains(err.Error(), AnnotationEngineTLS) {
				rt.Fatalf("error %v with ok %t, certificate %v", err, ok, got)
			}
			return
		}
		var tls TLS
		if jerr := json.Unmarshal([]byte(ann), &tls); jerr != nil || !ok {
			rt.Fatalf("accepted %q (ok %t), which does not decode: %v", ann, ok, jerr)
		}
		if diff := cmp.Diff(renderCertificate(renderInput{Engine: "demo", Namespace: "firebolt", Gen: 1}, tls), got); diff != "" {
			rt.Fatalf("accepted %q: -its certificate, +got:\n%s", ann, diff)
		}
	})
}

// TestRenderedHashMemoFollowsTLS: the render memo answers for the TLS it
// was computed with only, and keeps its own copy of it.
func TestRenderedHashMemoFollowsTLS(t *testing.T) {
	base := renderInput{
		Engine: "memo-tls", Namespace: "firebolt", Gen: 2,
		Spec:       v1alpha1.FireboltEngineSpec{InstanceRef: "inst", Replicas: 2},
		InstanceID: "01JBCDEFGHJKMNPQRSTVWXYZ00", MetadataEndpoint: "inst-metadata.firebolt.svc.cluster.local:7000",
		Images: v1beta1.Images{Engine: "engine:1", Metadata: "metadata:1"},
	}
	with := func(f func(*TLS)) renderInput {
		r := base
		tls := *testTLS()
		f(&tls)
		r.TLS = &tls
		return r
	}
	steps := []struct {
		name string
		in   renderInput
	}{
		{"Plain", base},
		{"TLS", with(func(*TLS) {})},
		{"Size", with(func(t *TLS) { t.Issuer.Size = 521 })},
		{"Duration", with(func(t *TLS) { t.Issuer.Duration = &metav1.Duration{Duration: time.Hour} })},
		{"Issuer", with(func(t *TLS) { t.Issuer.IssuerRef.Kind = "Issuer" })},
		{"PlainAgain", base},
	}
	seen := map[string]string{}
	for _, s := range steps {
		want := record(s.in.Gen, renderGeneration(s.in)).Hash
		if got := renderedHash(s.in); got != want {
			t.Errorf("%s: memo answered %s, a fresh rendering hashes to %s", s.name, got, want)
		}
		if prev, ok := seen[want]; ok && s.name != "PlainAgain" {
			t.Errorf("%s renders as %s did", s.name, prev)
		}
		seen[want] = s.name
	}
	in := with(func(t *TLS) { t.Issuer.Duration = &metav1.Duration{Duration: time.Hour} })
	renderedHash(in)
	in.TLS.Issuer.Duration.Duration = 2 * time.Hour
	if got, want := renderedHash(in), record(in.Gen, renderGeneration(in)).Hash; got != want {
		t.Errorf("after the caller mutated its TLS: memo answered %s, want %s", got, want)
	}
	plain, _ := renderInputWeight(base, memoRenderBytes)
	tls, _ := renderInputWeight(with(func(*TLS) {}), memoRenderBytes)
	if tls <= plain {
		t.Errorf("renderInputWeight: %d with TLS, %d without: TLS is not weighed", tls, plain)
	}
}
