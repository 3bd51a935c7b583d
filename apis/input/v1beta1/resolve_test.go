package v1beta1

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

func defaults() Resolved {
	return Resolved{
		Images: Images{
			Engine:    "oci.firebolt.io/firebolt-db/engine:release-5.0.0-pre.0.20260815074041.524de236b514",
			Metadata:  "ghcr.io/firebolt-db/metadata:release-5.0.0-pre.0.20260815074041.524de236b514",
			Gateway:   "envoyproxy/envoy:v1.37.2",
			Postgres:  "postgres:16-alpine",
			WakeAgent: "ghcr.io/firebolt-db/function-firebolt:v0.1.0",
		},
		EngineResourceBounds:     corev1.ResourceList{},
		MetricScrapeMode:         v1alpha1.MetricScrapeModeApiserverProxy,
		Scrape:                   ResolvedScrape{PodTimeout: 2 * time.Second, OverallTimeout: 10 * time.Second, MaxBodyBytes: 1048576, Concurrency: 16, MaxConcurrentScrapes: 64},
		StableTTL:                30 * time.Minute,
		KubernetesProviderConfig: "default",
	}
}

func with(f func(r *Resolved)) Resolved {
	r := defaults()
	f(&r)
	return r
}

func d(s string) *metav1.Duration {
	v, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return &metav1.Duration{Duration: v}
}

func q(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }

func TestResolve(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     *Input
		want   Resolved
		err    string
	}{
		"Nil": {
			reason: "A Composition step without input gets every default.",
			in:     nil,
			want:   defaults(),
		},
		"Empty": {
			reason: "An input with no fields gets every default.",
			in:     &Input{},
			want:   defaults(),
		},
		"AllSet": {
			reason: "Set fields win over the defaults; zero bounds stay unbounded.",
			in: &Input{Spec: InputSpec{
				Images: Images{
					Engine:    "registry.example.com/firebolt/engine:4.1",
					EngineUI:  "registry.example.com/firebolt/ui:1",
					Metadata:  "registry.example.com/firebolt/metadata@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
					Gateway:   "envoyproxy/envoy:v1.36.2",
					Postgres:  "postgres:16-alpine",
					WakeAgent: "registry.example.com/firebolt/function-firebolt:v9",
				},
				EngineResourceBounds:     ResourceBounds{MaxCPU: q("8"), MaxMemory: q("32Gi"), MaxEphemeralStorage: q("0")},
				MetricScrapeMode:         "PodIP",
				Scrape:                   Scrape{PodTimeout: d("500ms"), OverallTimeout: d("500ms"), MaxBodyBytes: ptr.To(int64(4096)), Concurrency: ptr.To(int32(1)), MaxConcurrentScrapes: ptr.To(int32(500))},
				StableTTL:                d("30s"),
				KubernetesProviderConfig: "provider-kubernetes-tenants",
			}},
			want: Resolved{
				Images: Images{
					Engine:    "registry.example.com/firebolt/engine:4.1",
					EngineUI:  "registry.example.com/firebolt/ui:1",
					Metadata:  "registry.example.com/firebolt/metadata@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
					Gateway:   "envoyproxy/envoy:v1.36.2",
					Postgres:  "postgres:16-alpine",
					WakeAgent: "registry.example.com/firebolt/function-firebolt:v9",
				},
				EngineResourceBounds:     corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi")},
				MetricScrapeMode:         v1alpha1.MetricScrapeModePodIP,
				Scrape:                   ResolvedScrape{PodTimeout: 500 * time.Millisecond, OverallTimeout: 500 * time.Millisecond, MaxBodyBytes: 4096, Concurrency: 1, MaxConcurrentScrapes: 500},
				StableTTL:                30 * time.Second,
				KubernetesProviderConfig: "provider-kubernetes-tenants",
			},
		},
		"PodTimeoutAlone": {
			reason: "A podTimeout within the default overallTimeout is accepted.",
			in:     &Input{Spec: InputSpec{Scrape: Scrape{PodTimeout: d("10s")}}},
			want:   with(func(r *Resolved) { r.Scrape.PodTimeout = 10 * time.Second }),
		},
		"PodTimeoutAboveOverall": {
			reason: "One pod's scrape may not outlast all scrapes.",
			in:     &Input{Spec: InputSpec{Scrape: Scrape{PodTimeout: d("11s")}}},
			err:    `spec.scrape.podTimeout: Invalid value: "11s": must not exceed spec.scrape.overallTimeout (10s)`,
		},
		"ZeroDuration": {
			reason: "Durations must be positive.",
			in:     &Input{Spec: InputSpec{StableTTL: d("0s")}},
			err:    `spec.stableTTL: Invalid value: "0s": must be positive`,
		},
		"ProviderConfigNotAName": {
			reason: "The ProviderConfig must be a name Kubernetes accepts.",
			in:     &Input{Spec: InputSpec{KubernetesProviderConfig: "Default Config"}},
			err:    `spec.kubernetesProviderConfig: Invalid value: "Default Config": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		},
		"NegativeDurations": {
			reason: "Every invalid field is reported, each with its path; invalid timeouts are not also compared.",
			in:     &Input{Spec: InputSpec{Scrape: Scrape{PodTimeout: d("-1s"), OverallTimeout: d("-2s")}}},
			err:    `[spec.scrape.podTimeout: Invalid value: "-1s": must be positive, spec.scrape.overallTimeout: Invalid value: "-2s": must be positive]`,
		},
		"NegativeBound": {
			reason: "Resource bounds may not be negative.",
			in:     &Input{Spec: InputSpec{EngineResourceBounds: ResourceBounds{MaxMemory: q("-1Gi")}}},
			err:    `spec.engineResourceBounds.maxMemory: Invalid value: "-1Gi": must not be negative`,
		},
		"UnknownScrapeMode": {
			reason: "The scrape mode is an enum.",
			in:     &Input{Spec: InputSpec{MetricScrapeMode: "Direct"}},
			err:    `spec.metricScrapeMode: Unsupported value: "Direct": supported values: "ApiserverProxy", "PodIP"`,
		},
		"ZeroBodyAndConcurrency": {
			reason: "The body cap and the concurrency must be at least 1.",
			in:     &Input{Spec: InputSpec{Scrape: Scrape{MaxBodyBytes: ptr.To(int64(0)), Concurrency: ptr.To(int32(-3))}}},
			err:    `[spec.scrape.maxBodyBytes: Invalid value: 0: must be at least 1, spec.scrape.concurrency: Invalid value: -3: must be at least 1]`,
		},
		"PodSecurity": {
			reason: "The allow-lists are kept as given.",
			in: &Input{Spec: InputSpec{PodSecurity: PodSecurity{
				AllowedHostPaths: []string{"/mnt/firebolt", "/"}, AllowedCapabilities: []string{"SYS_PTRACE", "ALL"},
				AllowedServiceAccountNames: []string{"engines", "metadata.v2"}, AllowRunAsRoot: true,
			}}},
			want: with(func(r *Resolved) {
				r.PodSecurity = PodSecurity{
					AllowedHostPaths: []string{"/mnt/firebolt", "/"}, AllowedCapabilities: []string{"SYS_PTRACE", "ALL"},
					AllowedServiceAccountNames: []string{"engines", "metadata.v2"}, AllowRunAsRoot: true,
				}
			}),
		},
		"PodSecurityInvalid": {
			reason: "An entry that could never match is refused with its index and the rule, as is a repeated one.",
			in: &Input{Spec: InputSpec{PodSecurity: PodSecurity{
				AllowedHostPaths:           []string{"mnt/firebolt", "/mnt/../etc", "/mnt/"},
				AllowedCapabilities:        []string{"CAP_SYS_ADMIN", "sys_ptrace", "NET_RAW", "NET_RAW"},
				AllowedServiceAccountNames: []string{"Engines"},
			}}},
			err: `[spec.podSecurity.allowedHostPaths[0]: Invalid value: "mnt/firebolt": must be an absolute, clean path such as /mnt/firebolt, ` +
				`spec.podSecurity.allowedHostPaths[1]: Invalid value: "/mnt/../etc": must be an absolute, clean path such as /mnt/firebolt, ` +
				`spec.podSecurity.allowedHostPaths[2]: Invalid value: "/mnt/": must be an absolute, clean path such as /mnt/firebolt, ` +
				`spec.podSecurity.allowedCapabilities[0]: Invalid value: "CAP_SYS_ADMIN": must be a capability as Kubernetes writes it: upper case, without the CAP_ prefix, e.g. SYS_PTRACE, ` +
				`spec.podSecurity.allowedCapabilities[1]: Invalid value: "sys_ptrace": must be a capability as Kubernetes writes it: upper case, without the CAP_ prefix, e.g. SYS_PTRACE, ` +
				`spec.podSecurity.allowedCapabilities[3]: Duplicate value: "NET_RAW", ` +
				`spec.podSecurity.allowedServiceAccountNames[0]: Invalid value: "Engines": must be a ServiceAccount name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]`,
		},
		"PodSecurityTooMany": {
			reason: "Crossplane never validates the input, so Resolve enforces the CRD's maxItems.",
			in: &Input{Spec: InputSpec{PodSecurity: PodSecurity{AllowedHostPaths: func() []string {
				out := make([]string, 65)
				for i := range out {
					out[i] = fmt.Sprintf("/mnt/%d", i)
				}
				return out
			}()}}},
			err: `spec.podSecurity.allowedHostPaths: Too many: 65: must have at most 64 items`,
		},
		"ZeroMaxConcurrentScrapes": {
			reason: "The process-wide scrape bound must be at least 1, or no engine could ever drain.",
			in:     &Input{Spec: InputSpec{Scrape: Scrape{MaxConcurrentScrapes: ptr.To(int32(0))}}},
			err:    `spec.scrape.maxConcurrentScrapes: Invalid value: 0: must be at least 1: it is the number of metrics scrapes the function process runs at once, across all engines`,
		},
		"BadImage": {
			reason: "Images must parse as references.",
			in:     &Input{Spec: InputSpec{Images: Images{Gateway: "Envoy:Latest!"}}},
			err:    `spec.images.gateway: Invalid value: "Envoy:Latest!": must be an image reference: could not parse reference: Envoy:Latest!`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tc.in.Resolve()
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.err, gotErr); diff != "" {
				t.Errorf("%s\nResolve(): -want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nResolve(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDefaultImagesArePinned reads the images a Composition step without
// input renders with: every one names an explicit version tag (a floating
// tag would change what a new generation runs without any change to a claim
// or to this function), and the engine and the metadata service come from
// the same Firebolt release. The opt-in UI sidecar has no default at all.
func TestDefaultImagesArePinned(t *testing.T) {
	r, err := (*Input)(nil).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{}
	for c, img := range map[string]string{
		"engine": r.Images.Engine, "metadata": r.Images.Metadata,
		"gateway": r.Images.Gateway, "postgres": r.Images.Postgres,
	} {
		ref, err := name.ParseReference(img)
		if err != nil {
			t.Errorf("default %s image %q: %v", c, img, err)
			continue
		}
		tag, ok := ref.(name.Tag)
		// The parser defaults a missing tag to latest; an explicit one is
		// spelled at the end of the reference.
		if !ok || !strings.HasSuffix(img, ":"+tag.TagStr()) {
			t.Errorf("default %s image %q names no explicit version tag", c, img)
			continue
		}
		if tag.TagStr() == "latest" {
			t.Errorf("default %s image %q floats on latest", c, img)
		}
		tags[c] = tag.TagStr()
	}
	if tags["engine"] != FireboltRelease || tags["metadata"] != FireboltRelease {
		t.Errorf("engine tag %q and metadata tag %q: want both %q, one release in lockstep", tags["engine"], tags["metadata"], FireboltRelease)
	}
	if r.Images.EngineUI != "" {
		t.Errorf("default engine UI image %q: want none, the platform chooses a pinned one", r.Images.EngineUI)
	}
}
