package envoyconfig

import (
	"time"

	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	streamv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/stream/v3"
	dfpfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/dynamic_forward_proxy/v3"
	healthcheckv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/health_check/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Extension names as Envoy registers them.
const (
	hcmFilterName         = "envoy.filters.network.http_connection_manager"
	healthCheckFilterName = "envoy.filters.http.health_check"
	luaFilterName         = "envoy.filters.http.lua"
	dfpFilterName         = "envoy.filters.http.dynamic_forward_proxy"
	routerFilterName      = "envoy.filters.http.router"
	stdoutAccessLogName   = "envoy.access_loggers.stdout"
)

// accessLogFormat is the original operator's access log line, key for key:
// operators' log parsers depend on it. Response flags and code details tell
// a 5xx Envoy made before any byte reached an engine (safe to retry) from
// one the engine returned (maybe not), tx_fail names a failed connect, and
// the path is the one the client sent, before any rewrite.
const accessLogFormat = `[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE%` +
	` flags=%RESPONSE_FLAGS% details=%RESPONSE_CODE_DETAILS%` +
	` tx_fail=%UPSTREAM_TRANSPORT_FAILURE_REASON% upstream=%UPSTREAM_HOST% cluster=%UPSTREAM_CLUSTER%` +
	` duration=%DURATION%ms rx=%BYTES_RECEIVED% tx=%BYTES_SENT%` +
	` authority=%REQ(:AUTHORITY)% engine=%REQ(X-FIREBOLT-ENGINE)%` + "\n"

// clientListener carries query traffic: health answer, engine selection,
// per-request DNS resolution of the engine Service, routing with retries.
func clientListener(t *typer, p Params) *listenerv3.Listener {
	hcm := &hcmv3.HttpConnectionManager{
		StatPrefix: "gateway",
		// Long queries stream results slowly; only a stream silent for five
		// minutes is cut.
		StreamIdleTimeout: durationpb.New(300 * time.Second),
		AccessLog: []*accesslogv3.AccessLog{{
			Name: stdoutAccessLogName,
			ConfigType: &accesslogv3.AccessLog_TypedConfig{TypedConfig: t.any(&streamv3.StdoutAccessLog{
				AccessLogFormat: &streamv3.StdoutAccessLog_LogFormat{LogFormat: &corev3.SubstitutionFormatString{
					Format: &corev3.SubstitutionFormatString_TextFormatSource{TextFormatSource: inline(accessLogFormat)},
				}},
			})},
		}},
		// Order matters: the health filter answers /healthz before the Lua
		// filter can reject it for lacking an engine; Lua must have pinned
		// :authority before the proxy filter resolves it.
		HttpFilters: []*hcmv3.HttpFilter{
			healthCheckFilter(t),
			httpFilter(t, luaFilterName, &luav3.Lua{DefaultSourceCode: inline(luaSource(p))}),
			httpFilter(t, dfpFilterName, &dfpfilterv3.FilterConfig{
				ImplementationSpecifier: &dfpfilterv3.FilterConfig_SubClusterConfig{SubClusterConfig: &dfpfilterv3.SubClusterConfig{
					// Only the first request to an engine waits for its
					// sub-cluster's DNS; generous for a cold kube-dns.
					ClusterInitTimeout: durationpb.New(5 * time.Second),
				}},
			}),
			httpFilter(t, routerFilterName, &routerv3.Router{}),
		},
		RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: engineRoutes(t)},
	}
	return &listenerv3.Listener{
		Name:                          clientListenerName,
		Address:                       socketAddress(anyAddress, ListenerPort),
		PerConnectionBufferLimitBytes: wrapperspb.UInt32(perConnectionBufferLimitBytes),
		FilterChains:                  []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{networkHCM(t, hcm)}}},
	}
}

// engineRoutes sends everything to the dynamic forward proxy.
func engineRoutes(t *typer) *routev3.RouteConfiguration {
	return &routev3.RouteConfiguration{
		Name: "local_route",
		VirtualHosts: []*routev3.VirtualHost{{
			Name:    "default",
			Domains: []string{"*"},
			Routes: []*routev3.Route{{
				Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
				Action: &routev3.Route_Route{Route: &routev3.RouteAction{
					ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: dfpClusterName},
					// No route timeout: queries run as long as the client's
					// own deadline allows.
					Timeout:     durationpb.New(0),
					RetryPolicy: retryPolicy(t),
				}},
			}},
		}},
	}
}

// statsListener serves the Prometheus scrape and the pod's probes on the
// metrics port, and nothing else of the admin interface.
func statsListener(t *typer, p Params) *listenerv3.Listener {
	hcm := &hcmv3.HttpConnectionManager{
		StatPrefix: "stats",
		HttpFilters: []*hcmv3.HttpFilter{
			healthCheckFilter(t),
			httpFilter(t, routerFilterName, &routerv3.Router{}),
		},
		RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: &routev3.RouteConfiguration{
			Name: "stats_route",
			VirtualHosts: []*routev3.VirtualHost{{
				Name:    "stats",
				Domains: []string{"*"},
				Routes: []*routev3.Route{{
					// An exact path (query string aside), so no other admin
					// endpoint is reachable through this listener.
					Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Path{Path: StatsPath}},
					Action: &routev3.Route_Route{Route: &routev3.RouteAction{
						ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: adminClusterName},
					}},
				}},
			}},
		}},
	}
	return &listenerv3.Listener{
		Name:         statsListenerName,
		Address:      socketAddress(anyAddress, p.MetricsPort),
		FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{networkHCM(t, hcm)}}},
	}
}

// healthCheckFilter answers HealthPath itself and never forwards it, so the
// readiness probe follows the server's health state: the preStop hook posts
// /healthcheck/fail to admin, /healthz turns 503 and the pod leaves the
// Service endpoints, while Envoy, still running through the preStop sleep,
// finishes the queries already in flight.
func healthCheckFilter(t *typer) *hcmv3.HttpFilter {
	return httpFilter(t, healthCheckFilterName, &healthcheckv3.HealthCheck{
		PassThroughMode: wrapperspb.Bool(false),
		Headers: []*routev3.HeaderMatcher{{
			Name: ":path",
			HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: &matcherv3.StringMatcher{
				MatchPattern: &matcherv3.StringMatcher_Exact{Exact: HealthPath},
			}},
		}},
	})
}

func httpFilter(t *typer, name string, cfg proto.Message) *hcmv3.HttpFilter {
	return &hcmv3.HttpFilter{Name: name, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: t.any(cfg)}}
}

func networkHCM(t *typer, hcm *hcmv3.HttpConnectionManager) *listenerv3.Filter {
	return &listenerv3.Filter{Name: hcmFilterName, ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: t.any(hcm)}}
}

func inline(s string) *corev3.DataSource {
	return &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: s}}
}
