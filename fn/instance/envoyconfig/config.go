// Package envoyconfig renders the instance gateway's Envoy configuration.
//
// The configuration is a pure function of the FireboltInstance: engines are
// found at request time (the Lua filter names the engine Service, the dynamic
// forward proxy resolves it), so engine create, delete, scale or rollout can
// never change the gateway ConfigMap or roll the gateway pods. Only an
// engine's switch between plain and TLS does (Upstream.Routes): during it
// the gateway reaches that engine by another Service or protocol.
package envoyconfig

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// Fixed facts of the gateway that the Deployment, Service and probes must
// agree with. They are constants of the product, not instance settings.
const (
	// ConfigKey is the ConfigMap key Envoy reads its bootstrap from.
	ConfigKey = "envoy.yaml"

	// ListenerPort is the client listener (Service port 80 targets it).
	ListenerPort int32 = 8080

	// AdminPort is Envoy's admin interface, bound to loopback only; the
	// preStop hook POSTs /healthcheck/fail to it.
	AdminPort int32 = 9901

	// DefaultMetricsPort is spec.gateway.metricsPort when unset.
	DefaultMetricsPort int32 = 9090

	// HealthPath is answered by Envoy itself on both listeners: 200 while
	// serving, 503 once /healthcheck/fail has been posted to the admin port.
	HealthPath = "/healthz"

	// StatsPath is the only path the metrics listener forwards to admin.
	StatsPath = "/stats/prometheus"
)

// Params are the instance-side facts the gateway configuration depends on.
// The one engine-side fact is Upstream.Routes: the engines in the middle
// of a switch between plain and TLS, each a deliberate rollout of the
// gateway when it starts and when it ends.
type Params struct {
	// Namespace of the instance; engines of this instance live in it.
	Namespace string

	// ClusterDomain is the cluster DNS domain; empty means cluster.local.
	ClusterDomain string

	// MetricsPort is spec.gateway.metricsPort; zero means 9090.
	MetricsPort int32

	// WakeAgent: the gateway pod runs the wake agent, and the Lua filter
	// asks it, as its last step, whether to hold a request for an engine
	// that has no ready endpoint.
	WakeAgent bool

	// Listener is the client listener's TLS posture.
	Listener Listener

	// Upstream is how the gateway reaches engines. Its zero value renders
	// the configuration as it was before upstream TLS existed.
	Upstream Upstream
}

// The wake agent's fixed ports in the gateway pod: /hold on loopback for
// the Lua filter, metrics and health on every address.
const (
	WakeAgentHoldPort    int32 = 9902
	WakeAgentMetricsPort int32 = 9903

	// WakeHoldTimeout bounds the Lua filter's call to the agent: the
	// agent's own hold timeout (120 s by default) plus a margin, so the
	// agent answers first.
	WakeHoldTimeout = 125 * time.Second
)

// Config returns envoy.yaml for an instance. The bytes are deterministic for
// a given binary: keys are sorted and nothing depends on map order, the clock
// or engine state.
func Config(p Params) ([]byte, error) {
	p = withDefaults(p)
	if err := validate(p).ToAggregate(); err != nil {
		return nil, errors.Wrap(err, "invalid gateway parameters")
	}
	// encoding/json writes struct fields in declaration order; going
	// through sigs.k8s.io/yaml (which decodes to a generic map and sorts
	// keys) makes the output independent of it, so the config-hash
	// annotation only moves when the configuration does.
	j, err := json.Marshal(newBootstrap(p))
	if err != nil {
		return nil, errors.Wrap(err, "cannot marshal gateway config")
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return nil, errors.Wrap(err, "cannot convert gateway config to YAML")
	}
	return y, nil
}

func withDefaults(p Params) Params {
	if p.ClusterDomain == "" {
		p.ClusterDomain = contract.ClusterDomain
	}
	p.MetricsPort = MetricsPortOrDefault(p.MetricsPort)
	return p
}

// MetricsPortOrDefault is the metrics port a spec's value means: 0 is the
// default.
func MetricsPortOrDefault(port int32) int32 {
	if port == 0 {
		return DefaultMetricsPort
	}
	return port
}

func validate(p Params) field.ErrorList {
	var errs field.ErrorList
	ns := field.NewPath("metadata", "namespace")
	for _, msg := range validation.IsDNS1123Label(p.Namespace) {
		errs = append(errs, field.Invalid(ns, p.Namespace, msg))
	}
	cd := field.NewPath("clusterDomain")
	for _, msg := range validation.IsDNS1123Subdomain(p.ClusterDomain) {
		errs = append(errs, field.Invalid(cd, p.ClusterDomain, msg))
	}
	mp := field.NewPath("spec", "gateway", "metricsPort")
	for _, msg := range validation.IsValidPortNum(int(p.MetricsPort)) {
		errs = append(errs, field.Invalid(mp, p.MetricsPort, msg))
	}
	// Envoy refuses to start when two listeners (or a listener and admin)
	// bind the same port; the wake agent shares the pod's network.
	if p.MetricsPort == ListenerPort || p.MetricsPort == AdminPort {
		errs = append(errs, field.Invalid(mp, p.MetricsPort,
			fmt.Sprintf("must differ from the gateway's listener port %d and admin port %d", ListenerPort, AdminPort)))
	}
	if p.WakeAgent && (p.MetricsPort == WakeAgentHoldPort || p.MetricsPort == WakeAgentMetricsPort) {
		errs = append(errs, field.Invalid(mp, p.MetricsPort,
			fmt.Sprintf("must differ from the wake agent's ports %d and %d", WakeAgentHoldPort, WakeAgentMetricsPort)))
	}
	l, lp := p.Listener, field.NewPath("spec", "tls", "gateway")
	switch {
	case l.Closed && (l.TLS || l.ClientCA || l.CRL):
		errs = append(errs, field.Invalid(lp, "closed", "a closed listener serves no TLS"))
	case l.ClientCA && !l.TLS:
		errs = append(errs, field.Invalid(lp.Child("clientCASecretRef"), "set", "client certificates need TLS"))
	case l.CRL && !l.ClientCA:
		errs = append(errs, field.Invalid(lp.Child("crlSecretRef"), "set", "a CRL needs clientCASecretRef"))
	}
	return append(errs, validateUpstream(p)...)
}

// engineAuthoritySuffix is what the Lua filter appends to an engine name:
// the engine's headless Service and its query port.
func engineAuthoritySuffix(p Params) string {
	return fmt.Sprintf("%s.%s.svc.%s:%d", contract.RoutingServiceSuffix, p.Namespace, p.ClusterDomain, contract.EngineQueryPort)
}

// serviceAuthoritySuffix is what the Lua filter appends to the Service of
// an engine route: the rest of its host, and the engine query port.
func serviceAuthoritySuffix(p Params) string {
	return fmt.Sprintf("%s:%d", serviceDomain(p), contract.EngineQueryPort)
}
