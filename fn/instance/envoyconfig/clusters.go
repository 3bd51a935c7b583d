package envoyconfig

import "time"

const (
	dfpClusterTypeName     = "envoy.clusters.dynamic_forward_proxy"
	httpProtocolOptionsKey = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

	// Engine pods answer 200 here while they take new queries and 503 from
	// the moment they are told to stop.
	engineReadyPath = "/health/ready"
)

// Per-engine (per sub-cluster, per gateway pod) caps: one engine's traffic
// cannot take another's connection slots, queue or retry budget. With one
// request per connection, connections and requests are the same dimension.
const (
	maxConnectionsPerEngine     = 1024
	maxPendingRequestsPerEngine = 1024
	maxRequestsPerEngine        = 1024
	// Above Envoy's default of 3 because a cutover can have many requests
	// retrying at once (num_retries is 50); still bounded against storms.
	maxRetriesPerEngine = 256
)

// dfpCluster reaches engines through their headless Services, plain when
// tls is nil.
//
// Sub-cluster mode, not the plain DNS-cache mode: a DNS cache keeps one host
// per authority, so a headless Service with N ready pods would collapse onto
// one pod and a retry would have nowhere else to go. In sub-cluster mode
// Envoy creates, per authority, a STRICT_DNS cluster with one host per A
// record, so requests round-robin over the pods and previous_hosts sends a
// retry to a pod not tried yet.
//
// Active health checks: a sub-cluster is a copy of this cluster's config
// with only name, type, lb_policy and endpoints replaced, so health_checks
// set here run in every per-engine STRICT_DNS sub-cluster against every pod.
// (This cluster itself has no hosts to check.) They probe the port queries go
// to, because DNS-discovered endpoints cannot carry a separate health-check
// port. A stopping engine turns /health/ready to 503 and leaves the set
// within one interval, before its endpoints leave DNS. With TLS the
// sub-clusters inherit the transport socket too, so the checks go over the
// same TLS as queries.
func dfpCluster(name string, tls *transportSocket) cluster {
	// The dynamic forward proxy refuses to start without these (unless
	// marked insecure); with the deprecated cluster fields Envoy would set
	// them itself. They only act on TLS.
	upstreamHTTP := upstreamHTTPProtocolOptions{AutoSni: true, AutoSanValidation: true}
	insecure := false
	if tls != nil {
		// Over TLS they would send the resolved host as SNI and require it
		// among the certificate's SANs, and the host of an engine in a
		// switch (<engine>-next) is in no certificate: upstreamTLS matches
		// the SANs itself. Envoy then needs the options marked insecure.
		upstreamHTTP = upstreamHTTPProtocolOptions{}
		insecure = true
	}
	return cluster{
		Name: name,
		// Short, because a black-holed stale pod IP would otherwise hang the
		// connect for the kernel's timeout before the retry loop moves on.
		ConnectTimeout:                dur(250 * time.Millisecond),
		LbPolicy:                      "CLUSTER_PROVIDED",
		PerConnectionBufferLimitBytes: u32(perConnectionBufferLimitBytes),
		TypedExtensionProtocolOptions: map[string]any{
			httpProtocolOptionsKey: httpProtocolOptions{
				typeURL: typeOf(httpProtocolOptionsKey),
				// One query per connection: every query resolves and
				// connects afresh, so after the engine Service switches
				// generation no new query rides an old pod's connection.
				CommonHTTPProtocolOptions:   commonHTTPProtocolOptions{MaxRequestsPerConnection: 1},
				UpstreamHTTPProtocolOptions: upstreamHTTP,
			},
		},
		CircuitBreakers: &circuitBreakers{Thresholds: []threshold{{
			MaxConnections:     maxConnectionsPerEngine,
			MaxPendingRequests: maxPendingRequestsPerEngine,
			MaxRequests:        maxRequestsPerEngine,
			MaxRetries:         maxRetriesPerEngine,
		}}},
		HealthChecks: []healthCheck{{
			Timeout:  dur(500 * time.Millisecond),
			Interval: dur(time.Second),
			// Idle engines are probed as often as busy ones (the default is
			// 60s), or a drained pod would be noticed only by the next query.
			NoTrafficInterval:  dur(time.Second),
			HealthyThreshold:   1,
			UnhealthyThreshold: 1,
			HTTPHealthCheck:    httpHealthCheck{Path: engineReadyPath},
		}},
		ClusterType: &customClusterType{
			Name: dfpClusterTypeName,
			TypedConfig: dfpClusterConfig{
				typeURL: typeOf("envoy.extensions.clusters.dynamic_forward_proxy.v3.ClusterConfig"),
				// Sub-clusters balance round robin (the zero value). Forget
				// engines without traffic for five minutes, so deleted
				// engines do not accumulate.
				SubClustersConfig:           subClustersConfig{SubClusterTTL: dur(300 * time.Second)},
				AllowInsecureClusterOptions: insecure,
			},
		},
		TransportSocket: tls,
	}
}

// engineCluster reaches engines over plain HTTP.
func engineCluster() cluster { return dfpCluster(dfpClusterName, nil) }

// engineTLSCluster reaches engines over TLS.
func engineTLSCluster(p Params) cluster { return dfpCluster(dfpTLSClusterName, upstreamTLS(p)) }

// adminStatsCluster lets the metrics listener reach the loopback admin port.
func adminStatsCluster() cluster { return loopbackCluster(adminClusterName, AdminPort) }

// loopbackCluster is a static cluster of one endpoint on loopback: a
// process of the gateway pod.
func loopbackCluster(name string, port int32) cluster {
	return cluster{
		Name:           name,
		ConnectTimeout: dur(250 * time.Millisecond),
		Type:           "STATIC",
		LoadAssignment: &clusterLoadAssignment{
			ClusterName: name,
			Endpoints: []localityLbEndpoints{{LbEndpoints: []lbEndpoint{{
				Endpoint: endpoint{Address: socketAddress(loopback, port)},
			}}}},
		},
	}
}

// wakeAgentCluster reaches the wake agent's /hold on loopback. The Lua
// filter treats an unreachable agent as "route through" (fail open), so a
// short connect timeout only shortens that path.
func wakeAgentCluster() cluster { return loopbackCluster(wakeAgentClusterName, WakeAgentHoldPort) }
