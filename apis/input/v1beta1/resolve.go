package v1beta1

import (
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// FireboltRelease is the Firebolt release the default engine and metadata
// images come from, the original operator's release default. The engine
// and the metadata service of one release are built and tested together, so
// both images take their tag from this one constant and move in lockstep.
const FireboltRelease = "release-5.0.0-pre.0.20260815074041.524de236b514"

// Default images: the original operator's release defaults, every one
// pinned to a version (a floating tag would change what a new generation
// runs without any change to a claim or to this function). The engine web
// UI sidecar has none: the original's floats (firebolt-core-ui:latest) and
// no pinned release of it is known, so a platform that offers the opt-in
// sidecar chooses its image in spec.images.engineUI.
const (
	DefaultEngineImage   = "oci.firebolt.io/firebolt-db/engine:" + FireboltRelease
	DefaultMetadataImage = "ghcr.io/firebolt-db/metadata:" + FireboltRelease
	DefaultGatewayImage  = "envoyproxy/envoy:v1.37.2"
	// PostgreSQL 16, as the original: a data directory is bound to its
	// major version, so a volume from the original starts only on 16.
	DefaultPostgresImage = "postgres:16-alpine"
	// DefaultWakeAgentImage is the image the Function package ships (its
	// runtime image is the package's own reference).
	DefaultWakeAgentImage = "ghcr.io/firebolt-db/function-firebolt:" + FunctionVersion
)

// FunctionVersion is the version the Function package is published at by
// default (the Makefile's VERSION).
const FunctionVersion = "v0.1.0"

// Defaults Resolve applies to other unset fields.
const (
	DefaultMetricScrapeMode = v1alpha1.MetricScrapeModeApiserverProxy
	DefaultPodTimeout       = 2 * time.Second
	DefaultOverallTimeout   = 10 * time.Second
	DefaultMaxBodyBytes     = int64(1 << 20)
	DefaultConcurrency      = 16
	// DefaultMaxConcurrentScrapes allows four drain checks at full
	// concurrency at once and holds at most 64 MiB of bodies at the
	// default body limit.
	DefaultMaxConcurrentScrapes = 64
	// DefaultStableTTL is long: Crossplane watches every object a
	// composite composes or requires (realtime compositions, on by default
	// in v2.4), so a stable composite needs no poll to notice drift; the
	// timer only bounds how long a watch event Crossplane dropped goes
	// unnoticed, and each timed call costs the API server a request per
	// composed object.
	DefaultStableTTL = 30 * time.Minute

	// DefaultKubernetesProviderConfig is the ProviderConfig
	// provider-kubernetes falls back to, which deploy/ creates.
	DefaultKubernetesProviderConfig = "default"
)

// Resolved is an Input with every default applied and every value checked.
// +kubebuilder:object:generate=false
type Resolved struct {
	// Images has every image set.
	Images Images

	// EngineResourceBounds holds the positive bounds only; a resource
	// absent from it is unbounded.
	EngineResourceBounds corev1.ResourceList

	MetricScrapeMode v1alpha1.MetricScrapeMode
	Scrape           ResolvedScrape
	StableTTL        time.Duration

	// PodSecurity is the input's allow-list, checked; empty lists stay
	// nil.
	PodSecurity PodSecurity

	// KubernetesProviderConfig is the ProviderConfig of PhasedRollout's
	// provider-kubernetes Objects.
	KubernetesProviderConfig string
}

// ResolvedScrape holds the scrape bounds with defaults applied.
// +kubebuilder:object:generate=false
type ResolvedScrape struct {
	PodTimeout           time.Duration
	OverallTimeout       time.Duration
	MaxBodyBytes         int64
	Concurrency          int
	MaxConcurrentScrapes int
}

// Resolve applies the defaults to in and validates the result. A nil Input
// (a Composition step without input) resolves to the defaults. The error
// names the path of every invalid field, e.g.
// "spec.scrape.podTimeout: Invalid value: \"0s\": must be positive".
func (in *Input) Resolve() (Resolved, error) {
	var s InputSpec
	if in != nil {
		s = in.Spec
	}
	spec := field.NewPath("spec")
	var errs field.ErrorList

	r := Resolved{
		Images: Images{
			Engine:    image(&errs, spec.Child("images", "engine"), s.Images.Engine, DefaultEngineImage),
			EngineUI:  image(&errs, spec.Child("images", "engineUI"), s.Images.EngineUI, ""),
			Metadata:  image(&errs, spec.Child("images", "metadata"), s.Images.Metadata, DefaultMetadataImage),
			Gateway:   image(&errs, spec.Child("images", "gateway"), s.Images.Gateway, DefaultGatewayImage),
			Postgres:  image(&errs, spec.Child("images", "postgres"), s.Images.Postgres, DefaultPostgresImage),
			WakeAgent: image(&errs, spec.Child("images", "wakeAgent"), s.Images.WakeAgent, DefaultWakeAgentImage),
		},
		EngineResourceBounds: corev1.ResourceList{},
		MetricScrapeMode:     DefaultMetricScrapeMode,
		Scrape: ResolvedScrape{
			PodTimeout:           duration(&errs, spec.Child("scrape", "podTimeout"), s.Scrape.PodTimeout, DefaultPodTimeout),
			OverallTimeout:       duration(&errs, spec.Child("scrape", "overallTimeout"), s.Scrape.OverallTimeout, DefaultOverallTimeout),
			MaxBodyBytes:         DefaultMaxBodyBytes,
			Concurrency:          DefaultConcurrency,
			MaxConcurrentScrapes: DefaultMaxConcurrentScrapes,
		},
		StableTTL:                duration(&errs, spec.Child("stableTTL"), s.StableTTL, DefaultStableTTL),
		KubernetesProviderConfig: DefaultKubernetesProviderConfig,
	}
	if pc := s.KubernetesProviderConfig; pc != "" {
		for _, msg := range validation.IsDNS1123Subdomain(pc) {
			errs = append(errs, field.Invalid(spec.Child("kubernetesProviderConfig"), pc, msg))
		}
		r.KubernetesProviderConfig = pc
	}
	r.PodSecurity, errs = podSecurity(s.PodSecurity, spec.Child("podSecurity"), errs)

	b := spec.Child("engineResourceBounds")
	bound(&errs, b.Child("maxCPU"), r.EngineResourceBounds, corev1.ResourceCPU, s.EngineResourceBounds.MaxCPU)
	bound(&errs, b.Child("maxMemory"), r.EngineResourceBounds, corev1.ResourceMemory, s.EngineResourceBounds.MaxMemory)
	bound(&errs, b.Child("maxEphemeralStorage"), r.EngineResourceBounds, corev1.ResourceEphemeralStorage, s.EngineResourceBounds.MaxEphemeralStorage)

	switch m := v1alpha1.MetricScrapeMode(s.MetricScrapeMode); m {
	case "":
	case v1alpha1.MetricScrapeModeApiserverProxy, v1alpha1.MetricScrapeModePodIP:
		r.MetricScrapeMode = m
	default:
		errs = append(errs, field.NotSupported(spec.Child("metricScrapeMode"), s.MetricScrapeMode,
			[]string{string(v1alpha1.MetricScrapeModeApiserverProxy), string(v1alpha1.MetricScrapeModePodIP)}))
	}

	sc := spec.Child("scrape")
	if p := s.Scrape.MaxBodyBytes; p != nil {
		if *p < 1 {
			errs = append(errs, field.Invalid(sc.Child("maxBodyBytes"), *p, "must be at least 1"))
		}
		r.Scrape.MaxBodyBytes = *p
	}
	if p := s.Scrape.Concurrency; p != nil {
		if *p < 1 {
			errs = append(errs, field.Invalid(sc.Child("concurrency"), *p, "must be at least 1"))
		}
		r.Scrape.Concurrency = int(*p)
	}
	if p := s.Scrape.MaxConcurrentScrapes; p != nil {
		if *p < 1 {
			errs = append(errs, field.Invalid(sc.Child("maxConcurrentScrapes"), *p,
				"must be at least 1: it is the number of metrics scrapes the function process runs at once, across all engines"))
		}
		r.Scrape.MaxConcurrentScrapes = int(*p)
	}
	if pt, ot := r.Scrape.PodTimeout, r.Scrape.OverallTimeout; pt > 0 && ot > 0 && pt > ot {
		errs = append(errs, field.Invalid(sc.Child("podTimeout"), r.Scrape.PodTimeout.String(),
			"must not exceed spec.scrape.overallTimeout ("+r.Scrape.OverallTimeout.String()+")"))
	}

	if len(errs) > 0 {
		return Resolved{}, errs.ToAggregate()
	}
	return r, nil
}

func image(errs *field.ErrorList, p *field.Path, v, def string) string {
	if v == "" {
		return def
	}
	if _, err := name.ParseReference(v); err != nil {
		*errs = append(*errs, field.Invalid(p, v, "must be an image reference: "+err.Error()))
	}
	return v
}

func duration(errs *field.ErrorList, p *field.Path, v *metav1.Duration, def time.Duration) time.Duration {
	if v == nil {
		return def
	}
	if v.Duration <= 0 {
		*errs = append(*errs, field.Invalid(p, v.Duration.String(), "must be positive"))
	}
	return v.Duration
}

// bound adds a positive bound to l; zero means unbounded.
func bound(errs *field.ErrorList, p *field.Path, l corev1.ResourceList, n corev1.ResourceName, q *resource.Quantity) {
	if q == nil {
		return
	}
	switch q.Sign() {
	case -1:
		*errs = append(*errs, field.Invalid(p, q.String(), "must not be negative"))
	case 1:
		l[n] = q.DeepCopy()
	}
}
