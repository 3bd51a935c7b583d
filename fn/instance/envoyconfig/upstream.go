package envoyconfig

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// Upstream is how the gateway reaches engines.
type Upstream struct {
	// TLS: engines without a route of their own are reached over TLS.
	TLS bool
	// CRL: upstream TLS also checks the CRL mounted at EngineCRLDir.
	CRL bool
	// Routes are the engines reached otherwise than by default
	// (<engine>-service, over TLS iff TLS). Sorted by Engine, unique.
	Routes []EngineRoute
}

// EngineRoute is one engine reached by another Service or protocol.
type EngineRoute struct {
	Engine  string // the engine's name, a DNS-1123 label
	Service string // the Service the gateway resolves for it, a DNS-1123 label
	TLS     bool
}

// UsesTLS is whether any engine is reached over TLS: then the gateway
// needs the engine CA (and the CRL, if any) mounted.
func (u Upstream) UsesTLS() bool {
	if u.TLS {
		return true
	}
	for _, r := range u.Routes {
		if r.TLS {
			return true
		}
	}
	return false
}

// Where the gateway pod mounts what it checks engine certificates against:
// the CAs of the engines' live generations, and the revocation list.
// Envoy reads both only when it loads the cluster (a validation context
// outside SDS is not watched), so a change of either takes a gateway
// rollout.
const (
	EngineCADir   = "/etc/envoy-tls/engine-ca"
	EngineCAFile  = "ca.crt"
	EngineCRLDir  = "/etc/envoy-tls/engine-crl"
	EngineCRLFile = "crl.pem"
)

// MaxEngineRoutes bounds Upstream.Routes. The whole configuration is one
// ConfigMap key (1 MiB for the object), and every route is a gateway
// rollout when it comes and another when it goes, so a list longer than
// this is a caller gone wrong, not a switch in progress.
const MaxEngineRoutes = 512

const (
	// dfpTLSClusterName is the dynamic forward proxy cluster that reaches
	// engines over TLS.
	dfpTLSClusterName = "dfp_tls"

	// upstreamClusterHeader names the cluster a request goes to. The Lua
	// filter sets it on every request it lets through, replacing whatever
	// the client sent; the route admits only the engine clusters.
	upstreamClusterHeader = "x-firebolt-upstream"
)

// routed is whether the route picks the engine cluster per request: with
// one plain cluster and every engine at <engine>-service there is nothing
// to pick, and the configuration stays what it was before upstream TLS
// existed, byte for byte.
func (u Upstream) routed() bool {
	return u.UsesTLS() || len(u.effectiveRoutes()) > 0
}

// effectiveRoutes are the routes that change anything: a route equal to
// the default is dropped, so it can never be needed and never rolls the
// gateway. Nil when none is left.
func (u Upstream) effectiveRoutes() []EngineRoute {
	var out []EngineRoute
	for _, r := range u.Routes {
		if r.Service != contract.RoutingService(r.Engine) || r.TLS != u.TLS {
			out = append(out, r)
		}
	}
	return out
}

// defaultCluster is the cluster of engines without a route.
func (u Upstream) defaultCluster() string { return protocolCluster(u.TLS) }

func protocolCluster(tls bool) string {
	if tls {
		return dfpTLSClusterName
	}
	return dfpClusterName
}

// engineClusters are the clusters engines are reached through, in the
// order they are rendered.
func (u Upstream) engineClusters() []string {
	if u.UsesTLS() {
		return []string{dfpClusterName, dfpTLSClusterName}
	}
	return []string{dfpClusterName}
}

// engineClusterPattern matches exactly the engine clusters' names: the
// route's guard, so that even a request the Lua filter failed to stamp
// cannot name the admin or wake agent cluster.
func (u Upstream) engineClusterPattern() string {
	names := u.engineClusters()
	for i, n := range names {
		names[i] = regexp.QuoteMeta(n)
	}
	return "^(?:" + strings.Join(names, "|") + ")$"
}

// serviceDomain is what follows a Service name in its host.
func serviceDomain(p Params) string {
	return fmt.Sprintf(".%s.svc.%s", p.Namespace, p.ClusterDomain)
}

func validateUpstream(p Params) field.ErrorList {
	var errs field.ErrorList
	u, rp := p.Upstream, field.NewPath("upstream", "routes")
	if len(u.Routes) > MaxEngineRoutes {
		errs = append(errs, field.TooMany(rp, len(u.Routes), MaxEngineRoutes))
	}
	services := make(map[string]int, len(u.Routes))
	for i, r := range u.Routes {
		ep, sp := rp.Index(i).Child("engine"), rp.Index(i).Child("service")
		for _, msg := range validation.IsDNS1123Label(r.Engine) {
			errs = append(errs, field.Invalid(ep, r.Engine, msg))
		}
		if i > 0 {
			switch prev := u.Routes[i-1].Engine; {
			case r.Engine == prev:
				errs = append(errs, field.Duplicate(ep, r.Engine))
			case r.Engine < prev:
				errs = append(errs, field.Invalid(ep, r.Engine, fmt.Sprintf("must sort after %q: routes are sorted by engine", prev)))
			}
		}
		serviceErrs := validation.IsDNS1123Label(r.Service)
		for _, msg := range serviceErrs {
			errs = append(errs, field.Invalid(sp, r.Service, msg))
		}
		if len(serviceErrs) == 0 {
			host := r.Service + serviceDomain(p)
			for _, msg := range validation.IsDNS1123Subdomain(host) {
				errs = append(errs, field.Invalid(sp, r.Service, fmt.Sprintf("its host %s: %s", host, msg)))
			}
		}
		// Envoy names a dynamic forward proxy's sub-cluster by host and
		// port alone, not by its parent cluster: one host reached through
		// both engine clusters would be one sub-cluster, configured by
		// whichever parent came last. So a Service is one engine's, and
		// never another engine's routing Service.
		if j, taken := services[r.Service]; taken {
			errs = append(errs, field.Invalid(sp, r.Service, fmt.Sprintf("is already upstream.routes[%d]'s: a Service reaches one engine", j)))
		} else {
			services[r.Service] = i
		}
		if other, ok := strings.CutSuffix(r.Service, contract.RoutingServiceSuffix); ok && other != r.Engine {
			errs = append(errs, field.Invalid(sp, r.Service, fmt.Sprintf("must not be engine %q's routing Service", other)))
		}
	}
	if u.CRL && !u.UsesTLS() {
		errs = append(errs, field.Invalid(field.NewPath("spec", "tls", "engine", "crlSecretRef"), "set",
			"a CRL needs upstream TLS: it revokes engine certificates, which are only checked over TLS"))
	}
	return errs
}

// upstreamTLS is the engine TLS cluster's transport socket: the original
// operator's upstream settings. TLS 1.2 to 1.3 with the original's curves;
// engine certificates chain to the CAs mounted at EngineCADir.
//
// No SNI and no check of the certificate against the host: engine
// certificates name *.<engine>-g<N>-hl.<ns>.svc.<cd>,
// <engine>-service.<ns>.svc.<cd> and localhost, while during a switch the
// gateway reaches an engine by a Service (<engine>-next) that no
// certificate names. The SANs are matched instead against the instance's
// engines: an engine routing Service of this namespace, or a generation's
// headless Service. (Envoy matches a suffix or regex against the SAN as
// written, so the wildcard SAN never matches the regex; every engine
// certificate carries its routing Service's name, which the suffix
// matches.)
func upstreamTLS(p Params) *transportSocket {
	domain := serviceDomain(p)
	v := &validationContext{
		TrustedCA: fileSource{Filename: EngineCADir + "/" + EngineCAFile},
		MatchTypedSubjectAltNames: []subjectAltNameMatcher{
			{SanType: "DNS", Matcher: stringMatcher{Suffix: contract.RoutingServiceSuffix + domain}},
			{SanType: "DNS", Matcher: stringMatcher{SafeRegex: &regexMatcher{
				Regex: `^[a-z0-9-]+-g[0-9]+-hl` + regexp.QuoteMeta(domain) + `$`,
			}}},
		},
	}
	if p.Upstream.CRL {
		v.CRL = &fileSource{Filename: EngineCRLDir + "/" + EngineCRLFile}
	}
	return &transportSocket{Name: tlsTransportSocket, TypedConfig: upstreamTLSContext{
		typeURL: typeOf("envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext"),
		CommonTLSContext: commonTLSContext{
			TLSParams: tlsParams{
				TLSMinimumProtocolVersion: minimumTLS,
				TLSMaximumProtocolVersion: "TLSv1_3",
				ECDHCurves:                []string{"X25519", "P-256", "P-384", "P-521"},
			},
			ValidationContext: v,
		},
	}}
}
