package envoyconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	dfpclusterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/dynamic_forward_proxy/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	upstreamhttpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/anypb"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"pgregory.net/rapid"
)

// genUpstream draws a valid Upstream from few engines, so that two draws
// often mean the same: routes to an engine's own routing Service over the
// default protocol (which change nothing) or to <engine>-next, over either
// protocol, a CRL whenever TLS is used.
func genUpstream() *rapid.Generator[Upstream] {
	return rapid.Custom(func(t *rapid.T) Upstream {
		u := Upstream{TLS: rapid.Bool().Draw(t, "tls")}
		for _, engine := range []string{"bi", "etl", "sales"} {
			if !rapid.Bool().Draw(t, "route "+engine) {
				continue
			}
			service := rapid.SampledFrom([]string{engine + "-service", engine + "-next"}).Draw(t, "service "+engine)
			u.Routes = append(u.Routes, EngineRoute{Engine: engine, Service: service, TLS: rapid.Bool().Draw(t, "tls "+engine)})
		}
		u.CRL = u.UsesTLS() && rapid.Bool().Draw(t, "crl")
		return u
	})
}

// Upstreams the tests render, by what they are.
var (
	tlsDefault           = Upstream{TLS: true}
	tlsDefaultPlainRoute = Upstream{TLS: true, Routes: []EngineRoute{{Engine: "sales", Service: "sales-next"}}}
	plainDefaultTLSRoute = Upstream{Routes: []EngineRoute{{Engine: "sales", Service: "sales-next", TLS: true}}}
	tlsDefaultCRL        = Upstream{TLS: true, CRL: true}
)

// TestUpstreamConfigIsValidEnvoy: every upstream, under every client
// listener posture, is a config Envoy's API accepts, with the engine
// clusters it needs and a route that picks among them.
func TestUpstreamConfigIsValidEnvoy(t *testing.T) {
	upstreams := map[string]struct {
		u        Upstream
		clusters []string
	}{
		"Zero":                  {u: Upstream{}, clusters: []string{dfpClusterName, adminClusterName}},
		"TLSDefault":            {u: tlsDefault, clusters: []string{dfpClusterName, dfpTLSClusterName, adminClusterName}},
		"TLSDefaultPlainRoute":  {u: tlsDefaultPlainRoute, clusters: []string{dfpClusterName, dfpTLSClusterName, adminClusterName}},
		"PlainDefaultTLSRoute":  {u: plainDefaultTLSRoute, clusters: []string{dfpClusterName, dfpTLSClusterName, adminClusterName}},
		"TLSDefaultCRL":         {u: tlsDefaultCRL, clusters: []string{dfpClusterName, dfpTLSClusterName, adminClusterName}},
		"PlainRouteOnly":        {u: Upstream{Routes: []EngineRoute{{Engine: "sales", Service: "sales-next"}}}, clusters: []string{dfpClusterName, adminClusterName}},
		"TLSRouteWithCRL":       {u: Upstream{CRL: true, Routes: []EngineRoute{{Engine: "sales", Service: "sales-service", TLS: true}}}, clusters: []string{dfpClusterName, dfpTLSClusterName, adminClusterName}},
		"OnlyRoutesLikeDefault": {u: Upstream{TLS: true, Routes: []EngineRoute{{Engine: "sales", Service: "sales-service", TLS: true}}}, clusters: []string{dfpClusterName, dfpTLSClusterName, adminClusterName}},
	}
	postures := map[string]Listener{
		"Plain":        {},
		"TLS":          {TLS: true},
		"MutualTLSCRL": {TLS: true, ClientCA: true, CRL: true},
	}
	for un, uc := range upstreams {
		for pn, l := range postures {
			t.Run(un+"/"+pn, func(t *testing.T) {
				p := Params{Namespace: "analytics", Listener: l, Upstream: uc.u}
				files, err := Files(p)
				if err != nil {
					t.Fatalf("Files(%+v): %v", p, err)
				}
				b := parse(t, []byte(files[ConfigKey]))
				for k, y := range files {
					if k != ConfigKey {
						parseSDS(t, y)
					}
				}
				got := make([]string, 0, len(b.GetStaticResources().GetClusters()))
				for _, c := range b.GetStaticResources().GetClusters() {
					got = append(got, c.GetName())
				}
				if diff := cmp.Diff(uc.clusters, got); diff != "" {
					t.Errorf("clusters: -want +got:\n%s", diff)
				}
				r := engineRoute(t, b)
				if routed := r.GetRoute().GetClusterHeader() != ""; routed != uc.u.routed() {
					t.Errorf("route picks the cluster by header: %v, want %v", routed, uc.u.routed())
				}
				ctx, _ := clientTLS(t, []byte(files[ConfigKey]))
				if (ctx != nil) != l.TLS {
					t.Errorf("client listener TLS %v, want %v", ctx != nil, l.TLS)
				}
			})
		}
	}
}

// todaysGoldens are the goldens as they were before upstream TLS existed
// (SHA-256 of the files at the commit that added Upstream), so that
// rewriting them with -update cannot hide a change of the zero case.
var todaysGoldens = map[string]string{
	"closed":                "533ffb71b8dfcd36085041b12b29dc24378f691cda36b0d106f2d3114ae2ba11",
	"custom-cluster-domain": "e6e2c1fa2ee905855df75fb44c0fd7e9616ca2471531ee4338ec561c730d6d21",
	"custom-metrics-port":   "0c9efb3a0af4d7e057dde822240018e378542b58606e968903268194d82de10e",
	"defaults":              "05a5a9a0cd0fe5a46a789b7baa770add5db134a7eafbe8751fea9881506bb1a9",
	"mutual-tls-crl":        "88b5ecde64c8ee0e5718b0387b2ab116b9697b2c0e6c2b56188c5d0a9440e0c3",
	"tls":                   "042c20171c29a409711ea76231f87c77b7b8534c5ace527d10f4eecf9daf32ce",
	"wake-agent":            "b6e1067d506f68e02021bb400affe0141b06c25db8a6e2bf331a9aa661f8e184",
}

// TestZeroUpstreamRendersTodaysBytes: an instance whose upstream changes
// nothing (the zero value, no routes, or only routes equal to the
// default) renders exactly the bytes it rendered before upstream TLS
// existed, so upgrading the function rolls no gateway.
func TestZeroUpstreamRendersTodaysBytes(t *testing.T) {
	zeroes := map[string]Upstream{
		"Zero":              {},
		"EmptyRoutes":       {Routes: []EngineRoute{}},
		"RoutesLikeDefault": {Routes: []EngineRoute{{Engine: "etl", Service: "etl-service"}, {Engine: "sales", Service: "sales-service"}}},
	}
	for name, sum := range todaysGoldens {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if got := sha256.Sum256(want); hex.EncodeToString(got[:]) != sum {
				t.Fatalf("testdata/%s.yaml is no longer the golden of before upstream TLS; every gateway would roll", name)
			}
			for zn, u := range zeroes {
				p, ok := goldenParams[name]
				if !ok {
					t.Fatalf("no golden params %q", name)
				}
				p.Upstream = u
				got, err := Config(p)
				if err != nil {
					t.Fatalf("Config(%+v): %v", p, err)
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("%s: Config(%+v) differs from testdata/%s.yaml:\n%s", zn, p, name, diff)
				}
			}
		})
	}
}

// wantUpstreamTLS is the original operator's upstream TLS for engines of
// namespace analytics in cluster.local.
func wantUpstreamTLS(crl bool) *tlsv3.UpstreamTlsContext {
	v := &tlsv3.CertificateValidationContext{
		TrustedCa: &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: "/etc/envoy-tls/engine-ca/ca.crt"}},
		MatchTypedSubjectAltNames: []*tlsv3.SubjectAltNameMatcher{
			{SanType: tlsv3.SubjectAltNameMatcher_DNS, Matcher: &matcherv3.StringMatcher{
				MatchPattern: &matcherv3.StringMatcher_Suffix{Suffix: "-service.analytics.svc.cluster.local"},
			}},
			{SanType: tlsv3.SubjectAltNameMatcher_DNS, Matcher: &matcherv3.StringMatcher{
				MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{
					Regex: `^[a-z0-9-]+-g[0-9]+-hl\.analytics\.svc\.cluster\.local$`,
				}},
			}},
		},
	}
	if crl {
		v.Crl = &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: "/etc/envoy-tls/engine-crl/crl.pem"}}
	}
	return &tlsv3.UpstreamTlsContext{CommonTlsContext: &tlsv3.CommonTlsContext{
		TlsParams: &tlsv3.TlsParameters{
			TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_2,
			TlsMaximumProtocolVersion: tlsv3.TlsParameters_TLSv1_3,
			EcdhCurves:                []string{"X25519", "P-256", "P-384", "P-521"},
		},
		ValidationContextType: &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: v},
	}}
}

// TestEngineTLSCluster: the TLS engine cluster is the plain one, which
// stays as it was, plus the original's upstream TLS; no SNI and no check
// of the host against the certificate (so Envoy must allow that), health
// checks kept (they inherit the transport socket).
func TestEngineTLSCluster(t *testing.T) {
	zero, err := Config(Params{Namespace: "analytics"})
	if err != nil {
		t.Fatal(err)
	}
	plainBefore := findCluster(t, parse(t, zero), dfpClusterName)
	for name, u := range map[string]Upstream{"TLSDefault": tlsDefault, "PlainDefaultTLSRoute": plainDefaultTLSRoute, "CRL": tlsDefaultCRL} {
		t.Run(name, func(t *testing.T) {
			y, err := Config(Params{Namespace: "analytics", Upstream: u})
			if err != nil {
				t.Fatal(err)
			}
			b := parse(t, y)
			if diff := cmp.Diff(plainBefore, findCluster(t, b, dfpClusterName), protocmp.Transform()); diff != "" {
				t.Errorf("plain engine cluster changed: -before +now:\n%s", diff)
			}
			c := findCluster(t, b, dfpTLSClusterName)
			ts := c.GetTransportSocket()
			if ts.GetName() != "envoy.transport_sockets.tls" {
				t.Errorf("transport socket %q", ts.GetName())
			}
			ctx := unpack(t, ts.GetTypedConfig(), &tlsv3.UpstreamTlsContext{})
			if diff := cmp.Diff(wantUpstreamTLS(u.CRL), ctx, protocmp.Transform()); diff != "" {
				t.Errorf("upstream TLS: -want +got:\n%s", diff)
			}
			if len(c.GetHealthChecks()) != 1 || c.GetHealthChecks()[0].GetTransportSocketMatchCriteria() != nil {
				t.Errorf("health checks %v, want the plain cluster's, over the cluster's TLS", c.GetHealthChecks())
			}

			// Undo exactly the differences: what is left is the plain cluster.
			po := unpack(t, c.GetTypedExtensionProtocolOptions()[httpProtocolOptionsKey], &upstreamhttpv3.HttpProtocolOptions{})
			if o := po.GetUpstreamHttpProtocolOptions(); o == nil || o.GetAutoSni() || o.GetAutoSanValidation() {
				t.Errorf("upstream_http_protocol_options %v, want auto_sni and auto_san_validation false", o)
			}
			cc := unpack(t, c.GetClusterType().GetTypedConfig(), &dfpclusterv3.ClusterConfig{})
			if !cc.GetAllowInsecureClusterOptions() {
				t.Error("allow_insecure_cluster_options unset: Envoy refuses a DFP cluster without auto_sni and auto_san_validation")
			}
			undone := proto.Clone(c).(*clusterv3.Cluster)
			undone.Name, undone.TransportSocket = dfpClusterName, nil
			po.UpstreamHttpProtocolOptions.AutoSni, po.UpstreamHttpProtocolOptions.AutoSanValidation = true, true
			undone.TypedExtensionProtocolOptions[httpProtocolOptionsKey] = pack(t, po)
			cc.AllowInsecureClusterOptions = false
			undone.GetClusterType().TypedConfig = pack(t, cc)
			if diff := cmp.Diff(plainBefore, undone, protocmp.Transform()); diff != "" {
				t.Errorf("TLS cluster differs from the plain one by more than TLS: -plain +tls:\n%s", diff)
			}
		})
	}
}

func pack(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestEngineCertificatesMatch: with Envoy's SAN semantics (a suffix or
// regex is matched against the SAN as written), every engine certificate
// of the instance matches, by the routing Service name it carries, and no
// certificate of another namespace or domain does.
func TestEngineCertificatesMatch(t *testing.T) {
	y, err := Config(Params{Namespace: "analytics", Upstream: tlsDefault})
	if err != nil {
		t.Fatal(err)
	}
	ctx := unpack(t, findCluster(t, parse(t, y), dfpTLSClusterName).GetTransportSocket().GetTypedConfig(), &tlsv3.UpstreamTlsContext{})
	matchers := ctx.GetCommonTlsContext().GetValidationContext().GetMatchTypedSubjectAltNames()
	matches := func(san string) bool {
		for _, m := range matchers {
			if s := m.GetMatcher().GetSuffix(); s != "" && strings.HasSuffix(san, s) {
				return true
			}
			if r := m.GetMatcher().GetSafeRegex().GetRegex(); r != "" && regexp.MustCompile(r).MatchString(san) {
				return true
			}
		}
		return false
	}
	certificate := func(engine string, gen, ns, domain string) []string {
		return []string{"*." + engine + "-g" + gen + "-hl." + ns + ".svc." + domain, engine + "-service." + ns + ".svc." + domain, "localhost"}
	}
	cases := map[string]struct {
		sans []string
		want bool
	}{
		"EngineCertificate":      {sans: certificate("sales", "3", "analytics", "cluster.local"), want: true},
		"OtherEngineCertificate": {sans: certificate("etl-2", "12", "analytics", "cluster.local"), want: true},
		"HeadlessServiceOnly":    {sans: []string{"sales-g3-hl.analytics.svc.cluster.local"}, want: true},
		"WildcardOnly":           {sans: []string{"*.sales-g3-hl.analytics.svc.cluster.local"}},
		"OtherNamespace":         {sans: certificate("sales", "3", "team-a", "cluster.local")},
		"OtherDomain":            {sans: certificate("sales", "3", "analytics", "corp.example")},
		"NamespaceLookalike":     {sans: []string{"sales-g3-hl.analyticsXsvcXcluster.local", "sales-service.analytics.svc.cluster.local.evil"}},
		"Localhost":              {sans: []string{"localhost"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := false
			for _, san := range tc.sans {
				got = got || matches(san)
			}
			if got != tc.want {
				t.Errorf("certificate %v accepted: %v, want %v", tc.sans, got, tc.want)
			}
		})
	}
}

// engineRoute is the client listener's one route.
func engineRoute(t *testing.T, b *bootstrapv3.Bootstrap) *routev3.Route {
	t.Helper()
	_, h := findListener(t, b, clientListenerName)
	return h.GetRouteConfig().GetVirtualHosts()[0].GetRoutes()[0]
}

// manyRoutes are n valid routes, sorted.
func manyRoutes(n int) []EngineRoute {
	out := make([]EngineRoute, n)
	for i := range out {
		e := fmt.Sprintf("e%04d", i)
		out[i] = EngineRoute{Engine: e, Service: e + "-next", TLS: i%2 == 0}
	}
	return out
}

// TestMostRoutesRender: the longest route list the validation lets
// through is a valid config.
func TestMostRoutesRender(t *testing.T) {
	p := Params{Namespace: "analytics", WakeAgent: true, Upstream: Upstream{TLS: true, CRL: true, Routes: manyRoutes(MaxEngineRoutes)}}
	y, err := Config(p)
	if err != nil {
		t.Fatalf("Config with %d routes: %v", MaxEngineRoutes, err)
	}
	script := luaScript(t, parse(t, y))
	if n := strings.Count(script, "-next\", cluster = "); n != MaxEngineRoutes {
		t.Errorf("script binds %d routes, want %d", n, MaxEngineRoutes)
	}
	newEnvoy(t, script)
}

// TestUpstreamRouteAdmitsOnlyEngineClusters: with upstream routing the
// route takes the cluster from the header the Lua filter sets, matches
// only when it names an engine cluster (never the admin or wake agent
// cluster, whoever set it), and drops it before the engine.
func TestUpstreamRouteAdmitsOnlyEngineClusters(t *testing.T) {
	cases := map[string]struct {
		u     Upstream
		admit []string
	}{
		"PlainRouteOnly": {u: Upstream{Routes: []EngineRoute{{Engine: "sales", Service: "sales-next"}}}, admit: []string{dfpClusterName}},
		"TLSDefault":     {u: tlsDefault, admit: []string{dfpClusterName, dfpTLSClusterName}},
		"PlainDefault":   {u: plainDefaultTLSRoute, admit: []string{dfpClusterName, dfpTLSClusterName}},
	}
	candidates := []string{dfpClusterName, dfpTLSClusterName, adminClusterName, wakeAgentClusterName, "", "dfp_tls2", "x" + dfpClusterName,
		dfpClusterName + "|" + adminClusterName, dfpTLSClusterName + "," + adminClusterName, "DFP_TLS"}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			y, err := Config(Params{Namespace: "analytics", WakeAgent: true, Upstream: tc.u})
			if err != nil {
				t.Fatal(err)
			}
			r := engineRoute(t, parse(t, y))
			if got := r.GetRoute().GetClusterHeader(); got != upstreamClusterHeader || r.GetRoute().GetCluster() != "" {
				t.Fatalf("route picks cluster %q by header %q, want only by %s", r.GetRoute().GetCluster(), got, upstreamClusterHeader)
			}
			if diff := cmp.Diff([]string{upstreamClusterHeader}, r.GetRequestHeadersToRemove()); diff != "" {
				t.Errorf("request_headers_to_remove: -want +got:\n%s", diff)
			}
			hs := r.GetMatch().GetHeaders()
			if len(hs) != 1 || hs[0].GetName() != upstreamClusterHeader || hs[0].GetInvertMatch() {
				t.Fatalf("route header matchers %v, want one on %s", hs, upstreamClusterHeader)
			}
			guard := regexp.MustCompile(hs[0].GetStringMatch().GetSafeRegex().GetRegex())
			var admitted []string
			for _, c := range candidates {
				if guard.MatchString(c) {
					admitted = append(admitted, c)
				}
			}
			if diff := cmp.Diff(tc.admit, admitted); diff != "" {
				t.Errorf("clusters the route admits: -want +got:\n%s", diff)
			}
		})
	}
}

// TestUpstreamRefused: each rule on the upstream is an error naming the
// field and the rule, never a config.
func TestUpstreamRefused(t *testing.T) {
	tooMany := manyRoutes(MaxEngineRoutes + 1)
	type fieldError struct {
		Type  field.ErrorType
		Field string
		Rule  string
	}
	cases := map[string]struct {
		params Params
		want   []fieldError
	}{
		"EngineNotALabel": {
			params: Params{Namespace: "analytics", Upstream: Upstream{Routes: []EngineRoute{{Engine: "Sales", Service: "sales-next"}}}},
			want:   []fieldError{{field.ErrorTypeInvalid, "upstream.routes[0].engine", "RFC 1123 label"}},
		},
		"ServiceNotALabel": {
			params: Params{Namespace: "analytics", Upstream: Upstream{Routes: []EngineRoute{{Engine: "sales", Service: "sales.next"}}}},
			want:   []fieldError{{field.ErrorTypeInvalid, "upstream.routes[0].service", "must not contain dots"}},
		},
		"ServiceHostTooLong": {
			params: Params{Namespace: strings.Repeat("n", 63), ClusterDomain: strings.Repeat("d", 60) + "." + strings.Repeat("d", 60) + "." + strings.Repeat("d", 60),
				Upstream: Upstream{Routes: []EngineRoute{{Engine: "sales", Service: "sales-next"}}}},
			want: []fieldError{{field.ErrorTypeInvalid, "upstream.routes[0].service", "its host sales-next." + strings.Repeat("n", 63)}},
		},
		"Unsorted": {
			params: Params{Namespace: "analytics", Upstream: Upstream{Routes: []EngineRoute{{Engine: "sales", Service: "sales-next"}, {Engine: "etl", Service: "etl-next"}}}},
			want:   []fieldError{{field.ErrorTypeInvalid, "upstream.routes[1].engine", "sorted by engine"}},
		},
		"DuplicateEngine": {
			params: Params{Namespace: "analytics", Upstream: Upstream{Routes: []EngineRoute{{Engine: "sales", Service: "sales-next"}, {Engine: "sales", Service: "sales-other"}}}},
			want:   []fieldError{{field.ErrorTypeDuplicate, "upstream.routes[1].engine", "Duplicate value"}},
		},
		"SharedService": {
			params: Params{Namespace: "analytics", Upstream: Upstream{Routes: []EngineRoute{{Engine: "etl", Service: "shared"}, {Engine: "sales", Service: "shared", TLS: true}}}},
			want:   []fieldError{{field.ErrorTypeInvalid, "upstream.routes[1].service", "a Service reaches one engine"}},
		},
		"OtherEnginesRoutingService": {
			params: Params{Namespace: "analytics", Upstream: Upstream{Routes: []EngineRoute{{Engine: "sales", Service: "etl-service", TLS: true}}}},
			want:   []fieldError{{field.ErrorTypeInvalid, "upstream.routes[0].service", `engine "etl"'s routing Service`}},
		},
		"TooManyRoutes": {
			params: Params{Namespace: "analytics", Upstream: Upstream{Routes: tooMany}},
			want:   []fieldError{{field.ErrorTypeTooMany, "upstream.routes", "must have at most 512 items"}},
		},
		"CRLWithoutTLS": {
			params: Params{Namespace: "analytics", Upstream: Upstream{CRL: true, Routes: []EngineRoute{{Engine: "sales", Service: "sales-next"}}}},
			want:   []fieldError{{field.ErrorTypeInvalid, "spec.tls.engine.crlSecretRef", "a CRL needs upstream TLS"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := validate(withDefaults(tc.params))
			got := make([]fieldError, 0, len(errs))
			for _, e := range errs {
				fe := fieldError{e.Type, e.Field, ""}
				for _, w := range tc.want {
					if strings.Contains(e.Error(), w.Rule) {
						fe.Rule = w.Rule
					}
				}
				got = append(got, fe)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("validate: -want +got (Rule empty: the message lacks it):\n%s\n%v", diff, errs)
			}
			y, err := Config(tc.params)
			if err == nil || y != nil {
				t.Fatalf("Config = %d bytes, %v; want no config and an error", len(y), err)
			}
			for _, fe := range tc.want {
				if !strings.Contains(err.Error(), fe.Field) || !strings.Contains(err.Error(), fe.Rule) {
					t.Errorf("Config error %q does not name %s and %q", err, fe.Field, fe.Rule)
				}
			}
		})
	}
}
