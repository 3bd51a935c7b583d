package envoyconfig

// Names other objects and tests refer to.
const (
	clientListenerName = "listener"
	statsListenerName  = "stats_listener"
	dfpClusterName     = "dynamic_forward_proxy"
	adminClusterName   = "admin_stats"
	// wakeAgentClusterName is the Lua filter's httpCall target.
	wakeAgentClusterName = "wake_agent"
)

// 2 MiB on the client listener and the upstream cluster alike: the router can
// replay (retry) only a request whose body fit in this buffer, so it is the
// limit of the zero-downtime contract, and it bounds gateway memory per
// request. Hard-coded, as in the original, so the two move together.
const perConnectionBufferLimitBytes = 2 << 20

func newBootstrap(p Params) bootstrap {
	listeners := []listener{statsListener(p)}
	if !p.Listener.Closed {
		listeners = []listener{clientListener(p), statsListener(p)}
	}
	return bootstrap{
		StaticResources: staticResources{
			Listeners: listeners,
			Clusters:  clusters(p),
		},
		// Loopback only: the admin interface can stop the server and flip
		// health. The metrics listener exposes just StatsPath from it.
		Admin: admin{Address: socketAddress(loopback, AdminPort)},
	}
}

const (
	anyAddress = "0.0.0.0"
	loopback   = "127.0.0.1"
)

func socketAddress(host string, port int32) address {
	return address{SocketAddress: socketAddr{
		Address:   host,
		PortValue: uint32(port), //nolint:gosec // validated 1-65535
	}}
}

func clusters(p Params) []cluster {
	cs := []cluster{engineCluster()}
	if p.Upstream.UsesTLS() {
		cs = append(cs, engineTLSCluster(p))
	}
	cs = append(cs, adminStatsCluster())
	if p.WakeAgent {
		cs = append(cs, wakeAgentCluster())
	}
	return cs
}
