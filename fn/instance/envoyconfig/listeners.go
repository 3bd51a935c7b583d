package envoyconfig

import "time"

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
func clientListener(p Params) listener {
	hcm := httpConnectionManager{
		StatPrefix: "gateway",
		// Long queries stream results slowly; only a stream silent for five
		// minutes is cut.
		StreamIdleTimeout: durPtr(300 * time.Second),
		AccessLog: []accessLog{{
			Name: stdoutAccessLogName,
			TypedConfig: stdoutAccessLog{
				typeURL:   typeOf("envoy.extensions.access_loggers.stream.v3.StdoutAccessLog"),
				LogFormat: substitutionFormatString{TextFormatSource: dataSource{InlineString: accessLogFormat}},
			},
		}},
		// Order matters: the health filter answers /healthz before the Lua
		// filter can reject it for lacking an engine; Lua must have pinned
		// :authority before the proxy filter resolves it.
		HTTPFilters: []httpFilter{
			healthCheckFilter(),
			{Name: luaFilterName, TypedConfig: luaFilterConfig{
				typeURL:           typeOf("envoy.extensions.filters.http.lua.v3.Lua"),
				DefaultSourceCode: dataSource{InlineString: luaSource(p)},
			}},
			{Name: dfpFilterName, TypedConfig: dfpFilterConfig{
				typeURL: typeOf("envoy.extensions.filters.http.dynamic_forward_proxy.v3.FilterConfig"),
				// Only the first request to an engine waits for its
				// sub-cluster's DNS; generous for a cold kube-dns.
				SubClusterConfig: subClusterConfig{ClusterInitTimeout: dur(5 * time.Second)},
			}},
			routerFilter(),
		},
		RouteConfig: engineRoutes(p.Upstream),
	}
	return listener{
		Name:                          clientListenerName,
		Address:                       socketAddress(anyAddress, ListenerPort),
		PerConnectionBufferLimitBytes: u32(perConnectionBufferLimitBytes),
		FilterChains:                  []filterChain{{Filters: []networkFilter{networkHCM(hcm)}, TransportSocket: downstreamTLS(p.Listener)}},
	}
}

// engineRoutes sends everything to the dynamic forward proxy: to its one
// plain cluster, or, when engines are reached by more than one cluster or
// Service, to the cluster the Lua filter names in upstreamClusterHeader.
//
// The Lua filter modifies the request's headers, which (its
// clear_route_cache default) clears the route Envoy picked before it ran,
// so the route is picked again with the header the filter set. Should the filter ever let a request through
// unstamped, the route still matches only an engine cluster's name, so no
// header can send a request to the admin interface or the wake agent. The
// header is internal: engines never see it.
func engineRoutes(u Upstream) routeConfiguration {
	r := route{
		Match: routeMatch{Prefix: "/"},
		Route: routeAction{
			Cluster: dfpClusterName,
			// No route timeout: queries run as long as the client's own
			// deadline allows.
			Timeout:     durPtr(0),
			RetryPolicy: newRetryPolicy(),
		},
	}
	if u.routed() {
		r.Match.Headers = []headerMatcher{{
			Name:        upstreamClusterHeader,
			StringMatch: &stringMatcher{SafeRegex: &regexMatcher{Regex: u.engineClusterPattern()}},
		}}
		r.Route.Cluster, r.Route.ClusterHeader = "", upstreamClusterHeader
		r.RequestHeadersToRemove = []string{upstreamClusterHeader}
	}
	return routeConfiguration{
		Name: "local_route",
		VirtualHosts: []virtualHost{{
			Name:    "default",
			Domains: []string{"*"},
			Routes:  []route{r},
		}},
	}
}

// statsListener serves the Prometheus scrape and the pod's probes on the
// metrics port, and nothing else of the admin interface.
func statsListener(p Params) listener {
	hcm := httpConnectionManager{
		StatPrefix: "stats",
		HTTPFilters: []httpFilter{
			healthCheckFilter(),
			routerFilter(),
		},
		RouteConfig: routeConfiguration{
			Name: "stats_route",
			VirtualHosts: []virtualHost{{
				Name:    "stats",
				Domains: []string{"*"},
				Routes: []route{{
					// An exact path (query string aside), so no other admin
					// endpoint is reachable through this listener.
					Match: routeMatch{Path: StatsPath},
					Route: routeAction{Cluster: adminClusterName},
				}},
			}},
		},
	}
	return listener{
		Name:         statsListenerName,
		Address:      socketAddress(anyAddress, p.MetricsPort),
		FilterChains: []filterChain{{Filters: []networkFilter{networkHCM(hcm)}}},
	}
}

// healthCheckFilter answers HealthPath itself and never forwards it, so the
// readiness probe follows the server's health state: the preStop hook posts
// /healthcheck/fail to admin, /healthz turns 503 and the pod leaves the
// Service endpoints, while Envoy, still running through the preStop sleep,
// finishes the queries already in flight.
func healthCheckFilter() httpFilter {
	return httpFilter{Name: healthCheckFilterName, TypedConfig: healthCheckFilterConfig{
		typeURL:         typeOf("envoy.extensions.filters.http.health_check.v3.HealthCheck"),
		PassThroughMode: false,
		Headers:         []headerMatcher{{Name: ":path", StringMatch: &stringMatcher{Exact: HealthPath}}},
	}}
}

func routerFilter() httpFilter {
	return httpFilter{Name: routerFilterName, TypedConfig: typeOf("envoy.extensions.filters.http.router.v3.Router")}
}

func networkHCM(hcm httpConnectionManager) networkFilter {
	hcm.typeURL = typeOf("envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager")
	return networkFilter{Name: hcmFilterName, TypedConfig: hcm}
}
