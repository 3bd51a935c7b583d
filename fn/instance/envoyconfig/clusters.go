package envoyconfig

import (
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	dfpclusterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/dynamic_forward_proxy/v3"
	upstreamhttpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

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

// engineCluster reaches engines through their headless Services.
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
// within one interval, before its endpoints leave DNS.
func engineCluster(t *typer) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name: dfpClusterName,
		// Short, because a black-holed stale pod IP would otherwise hang the
		// connect for the kernel's timeout before the retry loop moves on.
		ConnectTimeout:                durationpb.New(250 * time.Millisecond),
		LbPolicy:                      clusterv3.Cluster_CLUSTER_PROVIDED,
		PerConnectionBufferLimitBytes: wrapperspb.UInt32(perConnectionBufferLimitBytes),
		TypedExtensionProtocolOptions: map[string]*anypb.Any{
			httpProtocolOptionsKey: t.any(&upstreamhttpv3.HttpProtocolOptions{
				// One query per connection: every query resolves and
				// connects afresh, so after the engine Service switches
				// generation no new query rides an old pod's connection.
				CommonHttpProtocolOptions: &corev3.HttpProtocolOptions{MaxRequestsPerConnection: wrapperspb.UInt32(1)},
				// The dynamic forward proxy refuses to start without these
				// (unless marked insecure); with the deprecated cluster
				// fields Envoy would set them itself. They only act on TLS.
				UpstreamHttpProtocolOptions: &corev3.UpstreamHttpProtocolOptions{AutoSni: true, AutoSanValidation: true},
				UpstreamProtocolOptions: &upstreamhttpv3.HttpProtocolOptions_ExplicitHttpConfig_{
					ExplicitHttpConfig: &upstreamhttpv3.HttpProtocolOptions_ExplicitHttpConfig{
						ProtocolConfig: &upstreamhttpv3.HttpProtocolOptions_ExplicitHttpConfig_HttpProtocolOptions{
							HttpProtocolOptions: &corev3.Http1ProtocolOptions{},
						},
					},
				},
			}),
		},
		CircuitBreakers: &clusterv3.CircuitBreakers{Thresholds: []*clusterv3.CircuitBreakers_Thresholds{{
			Priority:           corev3.RoutingPriority_DEFAULT,
			MaxConnections:     wrapperspb.UInt32(maxConnectionsPerEngine),
			MaxPendingRequests: wrapperspb.UInt32(maxPendingRequestsPerEngine),
			MaxRequests:        wrapperspb.UInt32(maxRequestsPerEngine),
			MaxRetries:         wrapperspb.UInt32(maxRetriesPerEngine),
		}}},
		HealthChecks: []*corev3.HealthCheck{{
			Timeout:  durationpb.New(500 * time.Millisecond),
			Interval: durationpb.New(time.Second),
			// Idle engines are probed as often as busy ones (the default is
			// 60s), or a drained pod would be noticed only by the next query.
			NoTrafficInterval:  durationpb.New(time.Second),
			HealthyThreshold:   wrapperspb.UInt32(1),
			UnhealthyThreshold: wrapperspb.UInt32(1),
			HealthChecker: &corev3.HealthCheck_HttpHealthCheck_{HttpHealthCheck: &corev3.HealthCheck_HttpHealthCheck{
				Path: engineReadyPath,
			}},
		}},
		ClusterDiscoveryType: &clusterv3.Cluster_ClusterType{ClusterType: &clusterv3.Cluster_CustomClusterType{
			Name: dfpClusterTypeName,
			TypedConfig: t.any(&dfpclusterv3.ClusterConfig{
				ClusterImplementationSpecifier: &dfpclusterv3.ClusterConfig_SubClustersConfig{SubClustersConfig: &dfpclusterv3.SubClustersConfig{
					LbPolicy: clusterv3.Cluster_ROUND_ROBIN,
					// Forget engines without traffic for five minutes, so
					// deleted engines do not accumulate.
					SubClusterTtl: durationpb.New(300 * time.Second),
				}},
			}),
		}},
	}
}

// adminStatsCluster lets the metrics listener reach the loopback admin port.
func adminStatsCluster() *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 adminClusterName,
		ConnectTimeout:       durationpb.New(250 * time.Millisecond),
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
		LoadAssignment: &endpointv3.ClusterLoadAssignment{
			ClusterName: adminClusterName,
			Endpoints: []*endpointv3.LocalityLbEndpoints{{LbEndpoints: []*endpointv3.LbEndpoint{{
				HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
					Address: socketAddress(loopback, AdminPort),
				}},
			}}}},
		},
	}
}
