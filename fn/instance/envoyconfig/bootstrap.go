package envoyconfig

import (
	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/crossplane/function-sdk-go/errors"
)

// Names other objects and tests refer to.
const (
	clientListenerName = "listener"
	statsListenerName  = "stats_listener"
	dfpClusterName     = "dynamic_forward_proxy"
	adminClusterName   = "admin_stats"
)

// 2 MiB on the client listener and the upstream cluster alike: the router can
// replay (retry) only a request whose body fit in this buffer, so it is the
// limit of the zero-downtime contract, and it bounds gateway memory per
// request. Hard-coded, as in the original, so the two move together.
const perConnectionBufferLimitBytes = 2 << 20

func bootstrap(p Params) (*bootstrapv3.Bootstrap, error) {
	t := &typer{}
	b := &bootstrapv3.Bootstrap{
		StaticResources: &bootstrapv3.Bootstrap_StaticResources{
			Listeners: []*listenerv3.Listener{
				clientListener(t, p),
				statsListener(t, p),
			},
			Clusters: []*clusterv3.Cluster{
				engineCluster(t),
				adminStatsCluster(),
			},
		},
		// Loopback only: the admin interface can stop the server and flip
		// health. The metrics listener exposes just StatsPath from it.
		Admin: &bootstrapv3.Admin{Address: socketAddress(loopback, AdminPort)},
	}
	return b, t.err
}

// typer packs typed_config messages, keeping the first error so the builders
// read as plain values. Each message is validated before packing because
// validating the bootstrap does not look inside Any.
type typer struct{ err error }

type validator interface{ ValidateAll() error }

func (t *typer) any(m proto.Message) *anypb.Any {
	if t.err != nil {
		return nil
	}
	if v, ok := m.(validator); ok {
		if err := v.ValidateAll(); err != nil {
			t.err = errors.Wrapf(err, "invalid %s", m.ProtoReflect().Descriptor().FullName())
			return nil
		}
	}
	a, err := anypb.New(m)
	if err != nil {
		t.err = errors.Wrapf(err, "cannot pack %s", m.ProtoReflect().Descriptor().FullName())
		return nil
	}
	return a
}

const (
	anyAddress = "0.0.0.0"
	loopback   = "127.0.0.1"
)

func socketAddress(host string, port int32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address:       host,
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(port)}, //nolint:gosec // validated 1-65535
	}}}
}
