package envoyconfig

import (
	"strconv"
	"time"
)

// The types below mirror the Envoy v3 API messages this package emits, with
// exactly the fields it sets, named as protojson names them (UseProtoNames).
// They exist so the function binary does not link go-control-plane's
// generated API, which is most of its size and resident memory; the tests
// parse every rendered config into go-control-plane's Bootstrap (unknown
// fields rejected) and run Envoy's validation on it, so a wrong name, type or
// value fails there. A field absent here is one Envoy defaults.

type bootstrap struct {
	Admin           admin           `json:"admin"`
	StaticResources staticResources `json:"static_resources"`
}

type admin struct {
	Address address `json:"address"`
}

type staticResources struct {
	Listeners []listener `json:"listeners"`
	Clusters  []cluster  `json:"clusters"`
}

type address struct {
	SocketAddress socketAddr `json:"socket_address"`
}

type socketAddr struct {
	Address   string `json:"address"`
	PortValue uint32 `json:"port_value"`
}

// typeURL is a packed message's google.protobuf.Any "@type", embedded in
// each typed_config so it marshals inline with the message's fields.
type typeURL struct {
	Type string `json:"@type"`
}

func typeOf(fullName string) typeURL { return typeURL{Type: "type.googleapis.com/" + fullName} }

// Listeners (envoy.config.listener.v3).

type listener struct {
	Name                          string        `json:"name"`
	Address                       address       `json:"address"`
	PerConnectionBufferLimitBytes *uint32       `json:"per_connection_buffer_limit_bytes,omitempty"`
	FilterChains                  []filterChain `json:"filter_chains"`
}

type filterChain struct {
	Filters         []networkFilter  `json:"filters"`
	TransportSocket *transportSocket `json:"transport_socket,omitempty"`
}

type networkFilter struct {
	Name        string                `json:"name"`
	TypedConfig httpConnectionManager `json:"typed_config"`
}

// envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
type httpConnectionManager struct {
	typeURL
	StatPrefix        string             `json:"stat_prefix"`
	StreamIdleTimeout *duration          `json:"stream_idle_timeout,omitempty"`
	AccessLog         []accessLog        `json:"access_log,omitempty"`
	HTTPFilters       []httpFilter       `json:"http_filters"`
	RouteConfig       routeConfiguration `json:"route_config"`
}

type accessLog struct {
	Name        string          `json:"name"`
	TypedConfig stdoutAccessLog `json:"typed_config"`
}

// envoy.extensions.access_loggers.stream.v3.StdoutAccessLog
type stdoutAccessLog struct {
	typeURL
	LogFormat substitutionFormatString `json:"log_format"`
}

type substitutionFormatString struct {
	TextFormatSource dataSource `json:"text_format_source"`
}

type dataSource struct {
	InlineString string `json:"inline_string"`
}

type httpFilter struct {
	Name        string `json:"name"`
	TypedConfig any    `json:"typed_config"`
}

// envoy.extensions.filters.http.health_check.v3.HealthCheck
type healthCheckFilterConfig struct {
	typeURL
	PassThroughMode bool            `json:"pass_through_mode"`
	Headers         []headerMatcher `json:"headers"`
}

// headerMatcher sets exactly one of StringMatch and PresentMatch.
type headerMatcher struct {
	Name         string         `json:"name"`
	StringMatch  *stringMatcher `json:"string_match,omitempty"`
	PresentMatch bool           `json:"present_match,omitempty"`
}

// stringMatcher sets exactly one of Exact, Suffix and SafeRegex.
type stringMatcher struct {
	Exact     string        `json:"exact,omitempty"`
	Suffix    string        `json:"suffix,omitempty"`
	SafeRegex *regexMatcher `json:"safe_regex,omitempty"`
}

// regexMatcher is an RE2 regular expression (Envoy's only engine).
type regexMatcher struct {
	Regex string `json:"regex"`
}

// envoy.extensions.filters.http.lua.v3.Lua
type luaFilterConfig struct {
	typeURL
	DefaultSourceCode dataSource `json:"default_source_code"`
}

// envoy.extensions.filters.http.dynamic_forward_proxy.v3.FilterConfig
type dfpFilterConfig struct {
	typeURL
	SubClusterConfig subClusterConfig `json:"sub_cluster_config"`
}

type subClusterConfig struct {
	ClusterInitTimeout duration `json:"cluster_init_timeout"`
}

// Routes (envoy.config.route.v3).

type routeConfiguration struct {
	Name         string        `json:"name"`
	VirtualHosts []virtualHost `json:"virtual_hosts"`
}

type virtualHost struct {
	Name    string   `json:"name"`
	Domains []string `json:"domains"`
	Routes  []route  `json:"routes"`
}

type route struct {
	Match                  routeMatch  `json:"match"`
	Route                  routeAction `json:"route"`
	RequestHeadersToRemove []string    `json:"request_headers_to_remove,omitempty"`
}

// routeMatch sets exactly one of Prefix and Path; Headers must all match
// as well.
type routeMatch struct {
	Prefix  string          `json:"prefix,omitempty"`
	Path    string          `json:"path,omitempty"`
	Headers []headerMatcher `json:"headers,omitempty"`
}

// routeAction sets exactly one of Cluster and ClusterHeader.
type routeAction struct {
	Cluster       string       `json:"cluster,omitempty"`
	ClusterHeader string       `json:"cluster_header,omitempty"`
	Timeout       *duration    `json:"timeout,omitempty"`
	RetryPolicy   *retryPolicy `json:"retry_policy,omitempty"`
}

type retryPolicy struct {
	RetryOn            string               `json:"retry_on"`
	NumRetries         uint32               `json:"num_retries"`
	RetriableHeaders   []headerMatcher      `json:"retriable_headers"`
	RetryBackOff       retryBackOff         `json:"retry_back_off"`
	RetryHostPredicate []retryHostPredicate `json:"retry_host_predicate"`
	// An int64 field: protojson writes it as a JSON string.
	HostSelectionRetryMaxAttempts int64 `json:"host_selection_retry_max_attempts,string"`
}

type retryBackOff struct {
	BaseInterval duration `json:"base_interval"`
	MaxInterval  duration `json:"max_interval"`
}

type retryHostPredicate struct {
	Name        string  `json:"name"`
	TypedConfig typeURL `json:"typed_config"`
}

// Clusters (envoy.config.cluster.v3).

type cluster struct {
	Name                          string                 `json:"name"`
	Type                          string                 `json:"type,omitempty"`
	ClusterType                   *customClusterType     `json:"cluster_type,omitempty"`
	ConnectTimeout                duration               `json:"connect_timeout"`
	LbPolicy                      string                 `json:"lb_policy,omitempty"`
	PerConnectionBufferLimitBytes *uint32                `json:"per_connection_buffer_limit_bytes,omitempty"`
	TypedExtensionProtocolOptions map[string]any         `json:"typed_extension_protocol_options,omitempty"`
	CircuitBreakers               *circuitBreakers       `json:"circuit_breakers,omitempty"`
	HealthChecks                  []healthCheck          `json:"health_checks,omitempty"`
	LoadAssignment                *clusterLoadAssignment `json:"load_assignment,omitempty"`
	TransportSocket               *transportSocket       `json:"transport_socket,omitempty"`
}

type customClusterType struct {
	Name        string           `json:"name"`
	TypedConfig dfpClusterConfig `json:"typed_config"`
}

// envoy.extensions.clusters.dynamic_forward_proxy.v3.ClusterConfig
type dfpClusterConfig struct {
	typeURL
	SubClustersConfig           subClustersConfig `json:"sub_clusters_config"`
	AllowInsecureClusterOptions bool              `json:"allow_insecure_cluster_options,omitempty"`
}

// subClustersConfig leaves lb_policy at its zero value, ROUND_ROBIN, which
// protojson omits.
type subClustersConfig struct {
	SubClusterTTL duration `json:"sub_cluster_ttl"`
}

// envoy.extensions.upstreams.http.v3.HttpProtocolOptions
type httpProtocolOptions struct {
	typeURL
	CommonHTTPProtocolOptions   commonHTTPProtocolOptions   `json:"common_http_protocol_options"`
	UpstreamHTTPProtocolOptions upstreamHTTPProtocolOptions `json:"upstream_http_protocol_options"`
	ExplicitHTTPConfig          explicitHTTPConfig          `json:"explicit_http_config"`
}

type commonHTTPProtocolOptions struct {
	MaxRequestsPerConnection uint32 `json:"max_requests_per_connection"`
}

type upstreamHTTPProtocolOptions struct {
	AutoSni           bool `json:"auto_sni"`
	AutoSanValidation bool `json:"auto_san_validation"`
}

// explicitHTTPConfig selects HTTP/1.1 with its defaults (an empty message).
type explicitHTTPConfig struct {
	HTTPProtocolOptions struct{} `json:"http_protocol_options"`
}

// circuitBreakers has one threshold, at priority DEFAULT (the zero value,
// omitted).
type circuitBreakers struct {
	Thresholds []threshold `json:"thresholds"`
}

type threshold struct {
	MaxConnections     uint32 `json:"max_connections"`
	MaxPendingRequests uint32 `json:"max_pending_requests"`
	MaxRequests        uint32 `json:"max_requests"`
	MaxRetries         uint32 `json:"max_retries"`
}

type healthCheck struct {
	Timeout            duration        `json:"timeout"`
	Interval           duration        `json:"interval"`
	NoTrafficInterval  duration        `json:"no_traffic_interval"`
	HealthyThreshold   uint32          `json:"healthy_threshold"`
	UnhealthyThreshold uint32          `json:"unhealthy_threshold"`
	HTTPHealthCheck    httpHealthCheck `json:"http_health_check"`
}

type httpHealthCheck struct {
	Path string `json:"path"`
}

type clusterLoadAssignment struct {
	ClusterName string                `json:"cluster_name"`
	Endpoints   []localityLbEndpoints `json:"endpoints"`
}

type localityLbEndpoints struct {
	LbEndpoints []lbEndpoint `json:"lb_endpoints"`
}

type lbEndpoint struct {
	Endpoint endpoint `json:"endpoint"`
}

type endpoint struct {
	Address address `json:"address"`
}

// duration is a google.protobuf.Duration in protojson's form: seconds with
// 0, 3, 6 or 9 fractional digits and an "s" ("0.250s", "300s", "0s").
type duration time.Duration

func (d duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(d.String())), nil
}

func (d duration) String() string {
	n := time.Duration(d).Nanoseconds()
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	secs, nanos := n/1e9, n%1e9
	s := sign + strconv.FormatInt(secs, 10)
	switch {
	case nanos == 0:
	case nanos%1e6 == 0:
		s += "." + pad(nanos/1e6, 3)
	case nanos%1e3 == 0:
		s += "." + pad(nanos/1e3, 6)
	default:
		s += "." + pad(nanos, 9)
	}
	return s + "s"
}

func pad(v int64, width int) string {
	s := strconv.FormatInt(v, 10)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

func dur(d time.Duration) duration { return duration(d) }

func durPtr(d time.Duration) *duration {
	v := duration(d)
	return &v
}

func u32(v uint32) *uint32 { return &v }

// TLS (envoy.extensions.transport_sockets.tls.v3, envoy.config.core.v3).

// transportSocket's TypedConfig is a downstreamTLSContext or an
// upstreamTLSContext.
type transportSocket struct {
	Name        string `json:"name"`
	TypedConfig any    `json:"typed_config"`
}

// envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
// require_client_certificate is a BoolValue, which protojson writes bare.
type downstreamTLSContext struct {
	typeURL
	CommonTLSContext         commonTLSContext `json:"common_tls_context"`
	RequireClientCertificate bool             `json:"require_client_certificate,omitempty"`
}

// envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext
type upstreamTLSContext struct {
	typeURL
	CommonTLSContext commonTLSContext `json:"common_tls_context"`
}

// commonTLSContext sets at most one of ValidationContextSDSSecretConfig
// and ValidationContext.
type commonTLSContext struct {
	TLSParams                        tlsParams          `json:"tls_params"`
	TLSCertificateSDSSecretConfigs   []sdsSecretConfig  `json:"tls_certificate_sds_secret_configs,omitempty"`
	ValidationContextSDSSecretConfig *sdsSecretConfig   `json:"validation_context_sds_secret_config,omitempty"`
	ValidationContext                *validationContext `json:"validation_context,omitempty"`
}

type tlsParams struct {
	TLSMinimumProtocolVersion string   `json:"tls_minimum_protocol_version"`
	TLSMaximumProtocolVersion string   `json:"tls_maximum_protocol_version,omitempty"`
	ECDHCurves                []string `json:"ecdh_curves,omitempty"`
}

type sdsSecretConfig struct {
	Name      string       `json:"name"`
	SDSConfig configSource `json:"sds_config"`
}

type configSource struct {
	PathConfigSource   pathConfigSource `json:"path_config_source"`
	ResourceAPIVersion string           `json:"resource_api_version"`
}

type pathConfigSource struct {
	Path             string           `json:"path"`
	WatchedDirectory watchedDirectory `json:"watched_directory"`
}

type watchedDirectory struct {
	Path string `json:"path"`
}

// discoveryResponse is envoy.service.discovery.v3.DiscoveryResponse as a
// path config source file holds it.
type discoveryResponse struct {
	Resources []tlsSecret `json:"resources"`
}

// envoy.extensions.transport_sockets.tls.v3.Secret; sets exactly one of
// TLSCertificate and ValidationContext.
type tlsSecret struct {
	typeURL
	Name              string             `json:"name"`
	TLSCertificate    *tlsCertificate    `json:"tls_certificate,omitempty"`
	ValidationContext *validationContext `json:"validation_context,omitempty"`
}

type tlsCertificate struct {
	CertificateChain fileSource        `json:"certificate_chain"`
	PrivateKey       fileSource        `json:"private_key"`
	WatchedDirectory *watchedDirectory `json:"watched_directory,omitempty"`
}

// validationContext is a CertificateValidationContext: the CA a peer's
// certificate must chain to and, optionally, the CRL it is checked
// against. Client certificates match no SAN: any certificate of the CA is
// a client, as the original's. Engine certificates must match one of
// MatchTypedSubjectAltNames.
type validationContext struct {
	TrustedCA                 fileSource              `json:"trusted_ca"`
	CRL                       *fileSource             `json:"crl,omitempty"`
	WatchedDirectory          *watchedDirectory       `json:"watched_directory,omitempty"`
	MatchTypedSubjectAltNames []subjectAltNameMatcher `json:"match_typed_subject_alt_names,omitempty"`
}

// subjectAltNameMatcher matches one SAN of type SanType ("DNS").
type subjectAltNameMatcher struct {
	SanType string        `json:"san_type"`
	Matcher stringMatcher `json:"matcher"`
}

// fileSource is a DataSource read from a file.
type fileSource struct {
	Filename string `json:"filename"`
}
