package envoyconfig

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	streamv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/stream/v3"
	dfpclusterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/dynamic_forward_proxy/v3"
	dfpfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/dynamic_forward_proxy/v3"
	healthcheckv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/health_check/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	upstreamhttpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"pgregory.net/rapid"
	"sigs.k8s.io/yaml"
)

// parse reads envoy.yaml the way Envoy does (YAML → JSON → proto, unknown
// fields rejected) and runs the generated validation on the bootstrap and on
// every typed_config inside it, which the bootstrap's own validation skips.
func parse(t fataler, y []byte) *bootstrapv3.Bootstrap {
	t.Helper()
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatalf("envoy.yaml is not YAML: %v", err)
	}
	b := &bootstrapv3.Bootstrap{}
	if err := protojson.Unmarshal(j, b); err != nil {
		t.Fatalf("envoy.yaml does not parse as a Bootstrap: %v", err)
	}
	if err := b.ValidateAll(); err != nil {
		t.Fatalf("Bootstrap.ValidateAll: %v", err)
	}
	validateAnys(t, b.ProtoReflect())
	return b
}

type validator interface{ ValidateAll() error }

// fataler is what parse needs of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func validateAnys(t fataler, m protoreflect.Message) {
	t.Helper()
	if a, ok := m.Interface().(*anypb.Any); ok {
		inner, err := a.UnmarshalNew()
		if err != nil {
			t.Fatalf("cannot resolve %s: %v", a.GetTypeUrl(), err)
		}
		if v, ok := inner.(validator); ok {
			if err := v.ValidateAll(); err != nil {
				t.Fatalf("%s: %v", a.GetTypeUrl(), err)
			}
		}
		validateAnys(t, inner.ProtoReflect())
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					validateAnys(t, mv.Message())
					return true
				})
			}
		case fd.IsList():
			if fd.Message() != nil {
				for i := 0; i < v.List().Len(); i++ {
					validateAnys(t, v.List().Get(i).Message())
				}
			}
		case fd.Message() != nil:
			validateAnys(t, v.Message())
		}
		return true
	})
}

func unpack[M proto.Message](t *testing.T, a *anypb.Any, m M) M {
	t.Helper()
	if err := a.UnmarshalTo(m); err != nil {
		t.Fatalf("cannot unpack %s: %v", a.GetTypeUrl(), err)
	}
	return m
}

func findListener(t *testing.T, b *bootstrapv3.Bootstrap, name string) (*listenerv3.Listener, *hcmv3.HttpConnectionManager) {
	t.Helper()
	for _, l := range b.GetStaticResources().GetListeners() {
		if l.GetName() == name {
			f := l.GetFilterChains()[0].GetFilters()[0]
			return l, unpack(t, f.GetTypedConfig(), &hcmv3.HttpConnectionManager{})
		}
	}
	t.Fatalf("no listener %q", name)
	return nil, nil
}

func findCluster(t *testing.T, b *bootstrapv3.Bootstrap, name string) *clusterv3.Cluster {
	t.Helper()
	for _, c := range b.GetStaticResources().GetClusters() {
		if c.GetName() == name {
			return c
		}
	}
	t.Fatalf("no cluster %q", name)
	return nil
}

func filterNames(h *hcmv3.HttpConnectionManager) []string {
	names := make([]string, 0, len(h.GetHttpFilters()))
	for _, f := range h.GetHttpFilters() {
		names = append(names, f.GetName())
	}
	return names
}

// luaScript is the script exactly as Envoy would receive it.
func luaScript(t *testing.T, b *bootstrapv3.Bootstrap) string {
	t.Helper()
	_, h := findListener(t, b, clientListenerName)
	for _, f := range h.GetHttpFilters() {
		if f.GetName() == luaFilterName {
			return unpack(t, f.GetTypedConfig(), &luav3.Lua{}).GetDefaultSourceCode().GetInlineString()
		}
	}
	t.Fatal("no Lua filter")
	return ""
}

// facts are what §5.5 of the original fixes about the gateway, read back from
// the parsed config.
type facts struct {
	ListenerAddress     string
	ListenerPort        uint32
	ListenerBufferLimit uint32
	StreamIdleTimeout   string
	HTTPFilters         []string
	HealthPath          string
	HealthPassThrough   bool
	LuaPrelude          string
	DFPFilterSubCluster bool
	DFPInitTimeout      string
	AccessLogs          []string
	AccessLogFormat     string

	RoutePrefix          string
	RouteCluster         string
	RouteTimeout         string
	RetryOn              []string
	RetriableHeader      string
	RetriableHeaderMatch bool
	NumRetries           uint32
	RetryBackOff         [2]string
	RetryHostPredicates  []string
	HostSelectionRetries int64

	ClusterLbPolicy          string
	ClusterConnectTimeout    string
	ClusterBufferLimit       uint32
	ClusterType              string
	SubClusterLbPolicy       string
	SubClusterTTL            string
	MaxRequestsPerConnection uint32
	CircuitBreakers          [4]uint32
	HealthCheckPath          string
	HealthCheckTimings       [3]string
	HealthCheckThresholds    [2]uint32

	StatsListenerAddress string
	StatsListenerPort    uint32
	StatsFilters         []string
	StatsHealthPath      string
	StatsRoutePath       string
	StatsRouteCluster    string
	AdminStatsEndpoint   [2]any
	AdminAddress         [2]any
}

func readFacts(t *testing.T, b *bootstrapv3.Bootstrap) facts {
	t.Helper()
	var f facts

	l, h := findListener(t, b, clientListenerName)
	f.ListenerAddress = l.GetAddress().GetSocketAddress().GetAddress()
	f.ListenerPort = l.GetAddress().GetSocketAddress().GetPortValue()
	f.ListenerBufferLimit = l.GetPerConnectionBufferLimitBytes().GetValue()
	f.StreamIdleTimeout = h.GetStreamIdleTimeout().AsDuration().String()
	f.HTTPFilters = filterNames(h)
	hc := unpack(t, h.GetHttpFilters()[0].GetTypedConfig(), &healthcheckv3.HealthCheck{})
	f.HealthPath = hc.GetHeaders()[0].GetName() + "=" + hc.GetHeaders()[0].GetStringMatch().GetExact()
	f.HealthPassThrough = hc.GetPassThroughMode().GetValue()
	f.LuaPrelude, _, _ = strings.Cut(luaScript(t, b), "\n")
	dfp := unpack(t, h.GetHttpFilters()[2].GetTypedConfig(), &dfpfilterv3.FilterConfig{})
	f.DFPFilterSubCluster = dfp.GetSubClusterConfig() != nil
	f.DFPInitTimeout = dfp.GetSubClusterConfig().GetClusterInitTimeout().AsDuration().String()
	for _, al := range h.GetAccessLog() {
		f.AccessLogs = append(f.AccessLogs, al.GetName())
	}
	if len(h.GetAccessLog()) > 0 {
		std := unpack(t, h.GetAccessLog()[0].GetTypedConfig(), &streamv3.StdoutAccessLog{})
		f.AccessLogFormat = std.GetLogFormat().GetTextFormatSource().GetInlineString()
	}

	r := h.GetRouteConfig().GetVirtualHosts()[0].GetRoutes()[0]
	f.RoutePrefix = r.GetMatch().GetPrefix()
	f.RouteCluster = r.GetRoute().GetCluster()
	f.RouteTimeout = r.GetRoute().GetTimeout().AsDuration().String()
	rp := r.GetRoute().GetRetryPolicy()
	f.RetryOn = strings.Split(rp.GetRetryOn(), ",")
	f.RetriableHeader = rp.GetRetriableHeaders()[0].GetName()
	f.RetriableHeaderMatch = rp.GetRetriableHeaders()[0].GetPresentMatch()
	f.NumRetries = rp.GetNumRetries().GetValue()
	f.RetryBackOff = [2]string{rp.GetRetryBackOff().GetBaseInterval().AsDuration().String(), rp.GetRetryBackOff().GetMaxInterval().AsDuration().String()}
	for _, p := range rp.GetRetryHostPredicate() {
		f.RetryHostPredicates = append(f.RetryHostPredicates, p.GetName())
	}
	f.HostSelectionRetries = rp.GetHostSelectionRetryMaxAttempts()

	c := findCluster(t, b, dfpClusterName)
	f.ClusterLbPolicy = c.GetLbPolicy().String()
	f.ClusterConnectTimeout = c.GetConnectTimeout().AsDuration().String()
	f.ClusterBufferLimit = c.GetPerConnectionBufferLimitBytes().GetValue()
	f.ClusterType = c.GetClusterType().GetName()
	cc := unpack(t, c.GetClusterType().GetTypedConfig(), &dfpclusterv3.ClusterConfig{})
	f.SubClusterLbPolicy = cc.GetSubClustersConfig().GetLbPolicy().String()
	f.SubClusterTTL = cc.GetSubClustersConfig().GetSubClusterTtl().AsDuration().String()
	po := unpack(t, c.GetTypedExtensionProtocolOptions()[httpProtocolOptionsKey], &upstreamhttpv3.HttpProtocolOptions{})
	f.MaxRequestsPerConnection = po.GetCommonHttpProtocolOptions().GetMaxRequestsPerConnection().GetValue()
	th := c.GetCircuitBreakers().GetThresholds()[0]
	f.CircuitBreakers = [4]uint32{th.GetMaxConnections().GetValue(), th.GetMaxPendingRequests().GetValue(), th.GetMaxRequests().GetValue(), th.GetMaxRetries().GetValue()}
	chk := c.GetHealthChecks()[0]
	f.HealthCheckPath = chk.GetHttpHealthCheck().GetPath()
	f.HealthCheckTimings = [3]string{chk.GetTimeout().AsDuration().String(), chk.GetInterval().AsDuration().String(), chk.GetNoTrafficInterval().AsDuration().String()}
	f.HealthCheckThresholds = [2]uint32{chk.GetHealthyThreshold().GetValue(), chk.GetUnhealthyThreshold().GetValue()}

	sl, sh := findListener(t, b, statsListenerName)
	f.StatsListenerAddress = sl.GetAddress().GetSocketAddress().GetAddress()
	f.StatsListenerPort = sl.GetAddress().GetSocketAddress().GetPortValue()
	f.StatsFilters = filterNames(sh)
	shc := unpack(t, sh.GetHttpFilters()[0].GetTypedConfig(), &healthcheckv3.HealthCheck{})
	f.StatsHealthPath = shc.GetHeaders()[0].GetStringMatch().GetExact()
	sr := sh.GetRouteConfig().GetVirtualHosts()[0].GetRoutes()[0]
	f.StatsRoutePath = sr.GetMatch().GetPath()
	f.StatsRouteCluster = sr.GetRoute().GetCluster()
	ep := findCluster(t, b, adminClusterName).GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
	f.AdminStatsEndpoint = [2]any{ep.GetAddress(), ep.GetPortValue()}
	ad := b.GetAdmin().GetAddress().GetSocketAddress()
	f.AdminAddress = [2]any{ad.GetAddress(), ad.GetPortValue()}
	return f
}

// originalFacts is the original's gateway for an instance in namespace ns.
func originalFacts(ns, domain string, metricsPort uint32) facts {
	return facts{
		ListenerAddress:     "0.0.0.0",
		ListenerPort:        8080,
		ListenerBufferLimit: 2097152,
		StreamIdleTimeout:   "5m0s",
		HTTPFilters: []string{
			"envoy.filters.http.health_check",
			"envoy.filters.http.lua",
			"envoy.filters.http.dynamic_forward_proxy",
			"envoy.filters.http.router",
		},
		HealthPath:          ":path=/healthz",
		HealthPassThrough:   false,
		LuaPrelude:          `local engine_authority_suffix = "-service.` + ns + `.svc.` + domain + `:3473"`,
		DFPFilterSubCluster: true,
		DFPInitTimeout:      "5s",
		AccessLogs:          []string{"envoy.access_loggers.stdout"},
		// §6.3, byte for byte: operators' log parsers depend on these keys.
		// The newline ends each request's line.
		AccessLogFormat: `[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% ` +
			`flags=%RESPONSE_FLAGS% details=%RESPONSE_CODE_DETAILS% tx_fail=%UPSTREAM_TRANSPORT_FAILURE_REASON% ` +
			`upstream=%UPSTREAM_HOST% cluster=%UPSTREAM_CLUSTER% duration=%DURATION%ms rx=%BYTES_RECEIVED% tx=%BYTES_SENT% ` +
			`authority=%REQ(:AUTHORITY)% engine=%REQ(X-FIREBOLT-ENGINE)%` + "\n",

		RoutePrefix:          "/",
		RouteCluster:         "dynamic_forward_proxy",
		RouteTimeout:         "0s",
		RetryOn:              []string{"connect-failure", "refused-stream", "reset", "retriable-headers"},
		RetriableHeader:      "X-Firebolt-Drained",
		RetriableHeaderMatch: true,
		NumRetries:           50,
		RetryBackOff:         [2]string{"25ms", "250ms"},
		RetryHostPredicates:  []string{"envoy.retry_host_predicates.previous_hosts"},
		HostSelectionRetries: 5,

		ClusterLbPolicy:          "CLUSTER_PROVIDED",
		ClusterConnectTimeout:    "250ms",
		ClusterBufferLimit:       2097152,
		ClusterType:              "envoy.clusters.dynamic_forward_proxy",
		SubClusterLbPolicy:       "ROUND_ROBIN",
		SubClusterTTL:            "5m0s",
		MaxRequestsPerConnection: 1,
		CircuitBreakers:          [4]uint32{1024, 1024, 1024, 256},
		HealthCheckPath:          "/health/ready",
		HealthCheckTimings:       [3]string{"500ms", "1s", "1s"},
		HealthCheckThresholds:    [2]uint32{1, 1},

		StatsListenerAddress: "0.0.0.0",
		StatsListenerPort:    metricsPort,
		StatsFilters:         []string{"envoy.filters.http.health_check", "envoy.filters.http.router"},
		StatsHealthPath:      "/healthz",
		StatsRoutePath:       "/stats/prometheus",
		StatsRouteCluster:    "admin_stats",
		AdminStatsEndpoint:   [2]any{"127.0.0.1", uint32(9901)},
		AdminAddress:         [2]any{"127.0.0.1", uint32(9901)},
	}
}

func TestConfigMatchesOriginal(t *testing.T) {
	cases := map[string]struct {
		params Params
		want   facts
	}{
		"Defaults": {
			params: Params{Namespace: "analytics"},
			want:   originalFacts("analytics", "cluster.local", 9090),
		},
		"CustomMetricsPort": {
			params: Params{Namespace: "team-a", MetricsPort: 9191},
			want:   originalFacts("team-a", "cluster.local", 9191),
		},
		"CustomClusterDomain": {
			params: Params{Namespace: "analytics", ClusterDomain: "corp.example", MetricsPort: 9090},
			want:   originalFacts("analytics", "corp.example", 9090),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			y, err := Config(tc.params)
			if err != nil {
				t.Fatalf("Config: %v", err)
			}
			got := readFacts(t, parse(t, y))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Config(%+v) facts: -want +got:\n%s", tc.params, diff)
			}
		})
	}
}

func TestConfigNeverRetriesPlain5xx(t *testing.T) {
	y, err := Config(Params{Namespace: "analytics"})
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	f := readFacts(t, parse(t, y))
	for _, on := range f.RetryOn {
		// These would retry an engine's own 5xx, which may follow a partly
		// applied statement.
		if on == "5xx" || on == "gateway-error" || on == "retriable-status-codes" {
			t.Errorf("retry_on contains %q", on)
		}
	}
}

func TestConfigScriptIsEmbeddedFile(t *testing.T) {
	p := Params{Namespace: "analytics"}
	y, err := Config(p)
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	want := `local engine_authority_suffix = "-service.analytics.svc.cluster.local:3473"` + "\n" +
		"local wake_agent_cluster = nil\nlocal wake_hold_timeout_ms = 125000\n" + routeLua + "\n" + entryLua
	if diff := cmp.Diff(want, luaScript(t, parse(t, y))); diff != "" {
		t.Errorf("Lua filter source: -want +got:\n%s", diff)
	}
}

// Params must stay free of engine-side facts: an engine name, count, replica
// number or generation here would let engine lifecycle roll the gateway.
func TestParamsHoldOnlyInstanceFacts(t *testing.T) {
	// WakeAgent is whether the instance's gateway runs the agent: a fact of
	// the instance (its gateway's service account), never of an engine.
	// Listener is the instance's TLS posture: a fact of its spec and
	// status. Upstream is how the instance reaches engines: its routes name
	// engines, but only those switching between plain and TLS, each switch
	// a deliberate gateway rollout; an engine's lifecycle otherwise never
	// shows in it.
	want := []string{"Namespace", "ClusterDomain", "MetricsPort", "WakeAgent", "Listener", "Upstream"}
	fields := reflect.VisibleFields(reflect.TypeFor[Params]())
	got := make([]string, 0, len(fields))
	for _, f := range fields {
		got = append(got, f.Name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Params fields: -want +got:\n%s\nevery field must be a fact of the instance, never of its engines", diff)
	}
}

func genParams() *rapid.Generator[Params] {
	return rapid.Custom(func(t *rapid.T) Params {
		return Params{
			Namespace:     rapid.StringMatching(`[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?`).Draw(t, "namespace"),
			ClusterDomain: rapid.SampledFrom([]string{"", "cluster.local", "corp.example", "k8s.internal"}).Draw(t, "clusterDomain"),
			MetricsPort: rapid.Custom(func(t *rapid.T) int32 {
				p := rapid.Int32Range(0, 65535).Draw(t, "port")
				if p == ListenerPort || p == AdminPort || p == WakeAgentHoldPort || p == WakeAgentMetricsPort {
					return DefaultMetricsPort
				}
				return p
			}).Draw(t, "metricsPort"),
			WakeAgent: rapid.Bool().Draw(t, "wakeAgent"),
			Upstream:  genUpstream().Draw(t, "upstream"),
		}
	})
}

// The same instance always yields the same bytes, and two instances that
// differ in any input (after defaulting) yield different configs: the output
// is a function of exactly the instance facts and nothing else.
func TestConfigIsPureFunctionOfInstance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genParams().Draw(t, "p")
		q := genParams().Draw(t, "q")
		a1, err := Config(p)
		if err != nil {
			t.Fatalf("Config(%+v): %v", p, err)
		}
		a2, err := Config(p)
		if err != nil {
			t.Fatalf("Config(%+v): %v", p, err)
		}
		if !bytes.Equal(a1, a2) {
			t.Fatalf("Config(%+v) differs between calls", p)
		}
		b, err := Config(q)
		if err != nil {
			t.Fatalf("Config(%+v): %v", q, err)
		}
		if same := cmp.Equal(meaningOf(p), meaningOf(q)); same != bytes.Equal(a1, b) {
			t.Fatalf("instances equal=%v but configs equal=%v\np=%+v\nq=%+v", same, !same, p, q)
		}
	})
}

func TestConfigChangesWithEachInstanceField(t *testing.T) {
	base := Params{Namespace: "analytics", ClusterDomain: "cluster.local", MetricsPort: 9090}
	cases := map[string]struct {
		changed Params
		same    bool
	}{
		"Namespace":           {changed: Params{Namespace: "other", ClusterDomain: "cluster.local", MetricsPort: 9090}},
		"MetricsPort":         {changed: Params{Namespace: "analytics", ClusterDomain: "cluster.local", MetricsPort: 9191}},
		"ClusterDomain":       {changed: Params{Namespace: "analytics", ClusterDomain: "corp.example", MetricsPort: 9090}},
		"DefaultsSpelledOut":  {changed: Params{Namespace: "analytics"}, same: true},
		"DefaultDomainOnly":   {changed: Params{Namespace: "analytics", MetricsPort: 9090}, same: true},
		"DefaultMetricsOnly":  {changed: Params{Namespace: "analytics", ClusterDomain: "cluster.local"}, same: true},
		"IdenticalInstance":   {changed: base, same: true},
		"MetricsPortDefault0": {changed: Params{Namespace: "analytics", MetricsPort: 0}, same: true},
	}
	want, err := Config(base)
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Config(tc.changed)
			if err != nil {
				t.Fatalf("Config: %v", err)
			}
			if bytes.Equal(want, got) != tc.same {
				t.Errorf("Config(%+v) equal to Config(%+v): got %v, want %v", tc.changed, base, !tc.same, tc.same)
			}
		})
	}
}

func TestConfigRejectsBadParams(t *testing.T) {
	type fieldError struct {
		Type  field.ErrorType
		Field string
	}
	cases := map[string]struct {
		params Params
		want   []fieldError
	}{
		"EmptyNamespace": {
			params: Params{},
			want:   []fieldError{{field.ErrorTypeInvalid, "metadata.namespace"}},
		},
		"UppercaseNamespace": {
			params: Params{Namespace: "Analytics"},
			want:   []fieldError{{field.ErrorTypeInvalid, "metadata.namespace"}},
		},
		"DottedNamespace": {
			params: Params{Namespace: "a.b"},
			want:   []fieldError{{field.ErrorTypeInvalid, "metadata.namespace"}},
		},
		"QuoteInNamespace": {
			params: Params{Namespace: `a"b`},
			want:   []fieldError{{field.ErrorTypeInvalid, "metadata.namespace"}},
		},
		"BadClusterDomain": {
			params: Params{Namespace: "ns", ClusterDomain: "Cluster_Local"},
			want:   []fieldError{{field.ErrorTypeInvalid, "clusterDomain"}},
		},
		"NegativeMetricsPort": {
			params: Params{Namespace: "ns", MetricsPort: -1},
			want:   []fieldError{{field.ErrorTypeInvalid, "spec.gateway.metricsPort"}},
		},
		"MetricsPortTooHigh": {
			params: Params{Namespace: "ns", MetricsPort: 65536},
			want:   []fieldError{{field.ErrorTypeInvalid, "spec.gateway.metricsPort"}},
		},
		"MetricsPortIsListenerPort": {
			params: Params{Namespace: "ns", MetricsPort: 8080},
			want:   []fieldError{{field.ErrorTypeInvalid, "spec.gateway.metricsPort"}},
		},
		"MetricsPortIsAdminPort": {
			params: Params{Namespace: "ns", MetricsPort: 9901},
			want:   []fieldError{{field.ErrorTypeInvalid, "spec.gateway.metricsPort"}},
		},
		"EverythingWrong": {
			params: Params{Namespace: "NS", ClusterDomain: "-", MetricsPort: 9901},
			want: []fieldError{
				{field.ErrorTypeInvalid, "metadata.namespace"},
				{field.ErrorTypeInvalid, "clusterDomain"},
				{field.ErrorTypeInvalid, "spec.gateway.metricsPort"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := validate(withDefaults(tc.params))
			got := make([]fieldError, 0, len(errs))
			for _, e := range errs {
				got = append(got, fieldError{e.Type, e.Field})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("validate(%+v): -want +got:\n%s", tc.params, diff)
			}
			y, err := Config(tc.params)
			if err == nil || y != nil {
				t.Errorf("Config(%+v) = %d bytes, %v; want no config and an error", tc.params, len(y), err)
			}
			for _, fe := range tc.want {
				if err != nil && !strings.Contains(err.Error(), fe.Field) {
					t.Errorf("Config(%+v) error %q does not name %s", tc.params, err, fe.Field)
				}
			}
		})
	}
}
