package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/certmanager"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// Engine TLS certificates, as the original issues them: one per
// generation, 90 days long, renewed 30 days early (unless
// spec.tls.engine.certManager says otherwise), for server auth, with a
// new key at every issue.
const (
	engineTLSDuration    = 90 * 24 * time.Hour
	engineTLSRenewBefore = 30 * 24 * time.Hour
	// ComponentEngineTLS is the component label of a generation's
	// Certificate and Secret; cert-manager copies the Certificate's labels
	// onto its CertificateRequests, which are found by them.
	ComponentEngineTLS = "engine-tls"
	// Defaults of spec.tls.engine.certManager, as the schema's.
	defaultTLSAlgorithm = "ECDSA"
	defaultTLSSize      = 384
)

// Annotations of a TLS generation's StatefulSet.
const (
	// AnnotationEngineTLSHash is the original's engine-tls-hash: what of
	// the instance's engine TLS its pods run (engineTLSHash). On the pod
	// template too, as the auth hash. Absent without TLS.
	AnnotationEngineTLSHash = "firebolt.io/engine-tls-hash"
	// AnnotationEngineTLS is the generation's TLS as canonical JSON, so
	// that its Certificate can be rendered again from the recorded
	// StatefulSet alone (certificateOfStatefulSet). Absent without TLS.
	AnnotationEngineTLS = "firebolt.io/engine-tls"
	// maxEngineTLSAnnotation bounds the AnnotationEngineTLS value read
	// back from a recording: the rendered one is a few hundred bytes.
	maxEngineTLSAnnotation = 4 << 10
)

// Where the engine finds its serving certificate, as the original mounts
// it: the generation's Secret, and the bundle the startup script makes of
// its certificate and CA, which config.yaml's listener serves.
const (
	engineTLSMountPath  = "/secrets/tls/engine"
	engineTLSCertFile   = engineTLSMountPath + "/" + corev1.TLSCertKey
	engineTLSKeyFile    = engineTLSMountPath + "/" + corev1.TLSPrivateKeyKey
	engineTLSCAFile     = engineTLSMountPath + "/ca.crt"
	engineTLSBundleFile = runtimeDir + "/engine-tls-bundle.crt"
	// engineTLSVolumeMode: the key is readable by the engine's group
	// (fsGroup) only.
	engineTLSVolumeMode int32 = 0o440
)

// engineTLSScript, run before engineScript under TLS, writes the bundle
// the listener serves: the certificate followed by its CA when the Secret
// has one (an issuer may leave ca.crt empty or out), else the certificate
// alone. The engine does not start without it.
const engineTLSScript = `if [ -s ` + engineTLSCAFile + ` ]; then cat ` + engineTLSCertFile + ` ` + engineTLSCAFile + `; else cat ` + engineTLSCertFile + `; fi > ` + engineTLSBundleFile + ` || exit 1
`

// TLS is the instance's engine TLS as a generation renders it: the
// instance (a label of the Certificate, so the instance finds its engines'
// certificates, and the name of its anchor) and the issuer that signs each
// generation's certificate. Its JSON is AnnotationEngineTLS.
type TLS struct {
	Instance string                   `json:"instance"`
	Issuer   v1alpha1.CertManagerSpec `json:"issuer"`
}

// anchorSecretName is the instance's anchor certificate's Secret,
// <instance>-engine-tls.
func (t TLS) anchorSecretName() string {
	return t.Instance + "-engine-tls"
}

// engineTLSHash is the original's engine-tls-hash: the first 16 hex
// digits of the SHA-256 of the anchor Secret's name, the key algorithm and
// the key size as the spec has them (empty and 0 when unset), separated
// by NUL. The issuer is not in it, as in the original.
func engineTLSHash(t TLS) string {
	sum := sha256.Sum256([]byte(t.anchorSecretName() + "\x00" + t.Issuer.Algorithm + "\x00" + strconv.Itoa(int(t.Issuer.Size))))
	return hex.EncodeToString(sum[:])[:16]
}

// engineTLSAnnotation is AnnotationEngineTLS's value for t.
func engineTLSAnnotation(t TLS) string {
	b, err := json.Marshal(t)
	if err != nil {
		panic("engine: cannot encode the engine TLS annotation: " + err.Error())
	}
	return string(b)
}

// engineCoreURL is where the UI sidecar reaches the engine in its pod.
func engineCoreURL(tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return scheme + "://localhost:" + strconv.Itoa(PortQuery)
}

// engineTLSListeners is config.yaml's endpoints.http.listeners under TLS:
// the query port over TLS only, as the original's (health and metrics
// stay plain).
func engineTLSListeners() []any {
	return []any{map[string]any{
		"type": "tcp",
		"port": PortQuery,
		"tls": map[string]any{
			"certificate_file": engineTLSBundleFile,
			"private_key_file": engineTLSKeyFile,
		},
	}}
}

// engineTLSVolume is the generation's serving-certificate Secret.
func engineTLSVolume(r renderInput) corev1.Volume {
	return corev1.Volume{Name: podtemplate.VolumeEngineTLS, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName:  engineTLSName(r.Engine, r.Gen),
		DefaultMode: ptr.To(engineTLSVolumeMode),
		Optional:    ptr.To(false),
	}}}
}

// engineTLSMount is where the engine container reads it.
func engineTLSMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: podtemplate.VolumeEngineTLS, MountPath: engineTLSMountPath, ReadOnly: true}
}

// engineTLSName names generation gen's Certificate and its Secret,
// <engine>-g<N>-engine-tls, the shape podtemplate.IsEngineTLSSecretName
// keeps out of user templates.
func engineTLSName(engine string, gen int) string {
	return statefulSetName(engine, gen) + "-engine-tls"
}

// renderCertificate is generation r.Gen's Certificate: the names a client
// reaches its pods by (each pod under the generation's headless Service,
// the routing Service, and localhost for the pod's own sidecars). The
// issuer's duration and renewBefore apply when positive; a renewBefore not
// shorter than the duration is left out (certmanager.Certificate).
func renderCertificate(r renderInput, tls TLS) map[string]any {
	host := func(svc string) string { return svc + "." + r.Namespace + ".svc." + contract.ClusterDomain }
	alg, size := tls.Issuer.Algorithm, int64(tls.Issuer.Size)
	if alg == "" {
		alg = defaultTLSAlgorithm
	}
	if size == 0 {
		size = defaultTLSSize
	}
	return certmanager.Certificate(certmanager.Spec{
		Name:      engineTLSName(r.Engine, r.Gen),
		Namespace: r.Namespace,
		Labels: map[string]string{
			contract.LabelInstanceRef: tls.Instance,
			contract.LabelComponent:   ComponentEngineTLS,
			LabelEngine:               r.Engine,
			LabelGeneration:           strconv.Itoa(r.Gen),
		},
		Issuer:      tls.Issuer,
		Duration:    engineTLSDuration,
		RenewBefore: engineTLSRenewBefore,
		Extra: map[string]any{
			"dnsNames": []any{"*." + host(headlessName(r.Engine, r.Gen)), host(routingServiceName(r.Engine)), "localhost"},
			"usages":   []any{"server auth"},
			// The previous issue's request (and so its CA, which the
			// gateway trusts from it) outlives a renewal while the
			// generation's pods still serve the certificate they started
			// with, until a new generation replaces them (renewed).
			"revisionHistoryLimit": int64(2),
			"privateKey": map[string]any{
				"rotationPolicy": "Always", "encoding": "PKCS8", "algorithm": alg, "size": size,
			},
		},
	}).Object
}

// isTLSStatefulSet reports whether a rendered or recorded StatefulSet is
// of a TLS generation: it carries AnnotationEngineTLS.
func isTLSStatefulSet(sts map[string]any) bool {
	_, ok := engineTLSAnnotationOf(sts)
	return ok
}

// engineTLSAnnotationOf is sts's AnnotationEngineTLS; false when absent.
// A value that is not a string counts as present, so that it is refused
// rather than taken for plaintext.
func engineTLSAnnotationOf(sts map[string]any) (any, bool) {
	md, _ := sts["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	v, ok := ann[AnnotationEngineTLS]
	return v, ok
}

// certificateOfStatefulSet is the Certificate of generation gen of engine
// whose StatefulSet (as recorded: unstructured) is sts: renderCertificate
// for the TLS its AnnotationEngineTLS holds. false when sts has no such
// annotation; an error when the annotation is larger than
// maxEngineTLSAnnotation, is not the JSON of a TLS, or names what the
// schema does not admit. Pure.
func certificateOfStatefulSet(sts map[string]any, engine, namespace string, gen int) (map[string]any, bool, error) {
	v, ok := engineTLSAnnotationOf(sts)
	if !ok {
		return nil, false, nil
	}
	s, isString := v.(string)
	if !isString {
		return nil, false, fmt.Errorf("annotation %s of the statefulset is not a string", AnnotationEngineTLS)
	}
	if len(s) > maxEngineTLSAnnotation {
		return nil, false, fmt.Errorf("annotation %s of the statefulset is %d bytes, more than %d", AnnotationEngineTLS, len(s), maxEngineTLSAnnotation)
	}
	t, err := decodeEngineTLS(s)
	if err != nil {
		return nil, false, fmt.Errorf("annotation %s of the statefulset: %w", AnnotationEngineTLS, err)
	}
	return renderCertificate(renderInput{Engine: engine, Namespace: namespace, Gen: gen}, t), true, nil
}

// decodeEngineTLS decodes one JSON TLS, strictly (no unknown fields, no
// trailing data), and checks it holds what the schema admits, so that a
// hostile recording gives an error rather than a Certificate the API
// server or cert-manager would refuse.
func decodeEngineTLS(s string) (TLS, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	var t TLS
	if err := dec.Decode(&t); err != nil {
		return TLS{}, fmt.Errorf("not the JSON of an engine TLS: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return TLS{}, fmt.Errorf("not the JSON of an engine TLS: data after the object")
	}
	if t.Instance == "" {
		return TLS{}, fmt.Errorf("no instance")
	}
	if errs := validation.IsValidLabelValue(t.Instance); len(errs) > 0 {
		return TLS{}, fmt.Errorf("instance %q: %s", t.Instance, errs[0])
	}
	iss := t.Issuer
	if n := len(iss.IssuerRef.Name); n == 0 || n > validation.DNS1123SubdomainMaxLength {
		return TLS{}, fmt.Errorf("issuerRef.name must be 1 to %d characters", validation.DNS1123SubdomainMaxLength)
	}
	switch iss.IssuerRef.Kind {
	case "", "Issuer", "ClusterIssuer":
	default:
		return TLS{}, fmt.Errorf("issuerRef.kind %q is neither Issuer nor ClusterIssuer", iss.IssuerRef.Kind)
	}
	switch {
	case iss.Algorithm == "" && (iss.Size == 0 || iss.Size == 256 || iss.Size == 384 || iss.Size == 521):
	case iss.Algorithm == "ECDSA" && (iss.Size == 0 || iss.Size == 256 || iss.Size == 384 || iss.Size == 521):
	case iss.Algorithm == "RSA" && (iss.Size == 2048 || iss.Size == 4096 || iss.Size == 8192):
	default:
		return TLS{}, fmt.Errorf("key algorithm %q of size %d is not one cert-manager accepts", iss.Algorithm, iss.Size)
	}
	return t, nil
}
