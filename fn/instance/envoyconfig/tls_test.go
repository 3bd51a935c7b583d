package envoyconfig

import (
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"pgregory.net/rapid"
	"sigs.k8s.io/yaml"
)

// genListener draws a posture the instance can render: closed, plain,
// TLS, mutual TLS, mutual TLS with a CRL.
func genListener() *rapid.Generator[Listener] {
	return rapid.SampledFrom([]Listener{
		{}, {Closed: true}, {TLS: true}, {TLS: true, ClientCA: true}, {TLS: true, ClientCA: true, CRL: true},
	})
}

// parseSDS reads an SDS file as Envoy's path config source does: a
// DiscoveryResponse whose one resource is a tls.v3.Secret, validated.
func parseSDS(t fataler, y string) *tlsv3.Secret {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("SDS file is not YAML: %v", err)
	}
	r := &discoveryv3.DiscoveryResponse{}
	if err := protojson.Unmarshal(j, r); err != nil {
		t.Fatalf("SDS file does not parse as a DiscoveryResponse: %v", err)
	}
	if err := r.ValidateAll(); err != nil {
		t.Fatalf("DiscoveryResponse.ValidateAll: %v", err)
	}
	if len(r.GetResources()) != 1 {
		t.Fatalf("SDS file holds %d resources, want 1", len(r.GetResources()))
	}
	s := &tlsv3.Secret{}
	if err := r.GetResources()[0].UnmarshalTo(s); err != nil {
		t.Fatalf("SDS resource is not a tls.v3.Secret: %v", err)
	}
	if err := s.ValidateAll(); err != nil {
		t.Fatalf("Secret.ValidateAll: %v", err)
	}
	return s
}

// clientTLS is the client listener's DownstreamTlsContext, nil when it has
// no transport socket; found is false when there is no client listener.
func clientTLS(t fataler, y []byte) (ctx *tlsv3.DownstreamTlsContext, found bool) {
	t.Helper()
	for _, l := range parse(t, y).GetStaticResources().GetListeners() {
		if l.GetAddress().GetSocketAddress().GetPortValue() != uint32(ListenerPort) {
			continue
		}
		found = true
		chains := l.GetFilterChains()
		if len(chains) != 1 {
			t.Fatalf("client listener has %d filter chains, want 1", len(chains))
		}
		ts := chains[0].GetTransportSocket()
		if ts == nil {
			return nil, true
		}
		ctx = &tlsv3.DownstreamTlsContext{}
		if err := ts.GetTypedConfig().UnmarshalTo(ctx); err != nil {
			t.Fatalf("transport socket is not a DownstreamTlsContext: %v", err)
		}
	}
	return ctx, found
}

// TestFilesServeThePosture: for any instance and posture, every file is
// valid for Envoy's API, the SDS configs name files of the same
// ConfigMap, and the listener serves exactly the posture: closed has no
// client listener; plain has no TLS; TLS serves the mounted certificate
// from TLS 1.2 up; mutual TLS requires client certificates of the mounted
// CA, and the CRL is checked when asked for.
func TestFilesServeThePosture(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genParams().Draw(t, "p")
		p.Listener = genListener().Draw(t, "listener")
		files, err := Files(p)
		if err != nil {
			t.Fatalf("Files(%+v): %v", p, err)
		}
		ctx, found := clientTLS(t, []byte(files[ConfigKey]))
		if found == p.Listener.Closed {
			t.Fatalf("closed=%v but client listener present=%v", p.Listener.Closed, found)
		}
		wantFiles := 1
		if p.Listener.TLS {
			wantFiles++
		}
		if p.Listener.ClientCA {
			wantFiles++
		}
		if len(files) != wantFiles {
			t.Fatalf("Files(%+v) has keys %v, want %d", p.Listener, FileKeys(files), wantFiles)
		}
		if !p.Listener.TLS {
			if ctx != nil {
				t.Fatalf("posture %+v serves TLS", p.Listener)
			}
			return
		}
		if ctx == nil {
			t.Fatalf("posture %+v serves no TLS", p.Listener)
		}
		common := ctx.GetCommonTlsContext()
		if v := common.GetTlsParams().GetTlsMinimumProtocolVersion(); v != tlsv3.TlsParameters_TLSv1_2 {
			t.Fatalf("minimum TLS version %v, want TLSv1_2", v)
		}
		sds := common.GetTlsCertificateSdsSecretConfigs()
		if len(sds) != 1 {
			t.Fatalf("%d certificate SDS configs, want 1", len(sds))
		}
		cert := parseSDS(t, files[sdsKeyOf(t, sds[0].GetSdsConfig().GetPathConfigSource().GetPath())])
		if cert.GetName() != sds[0].GetName() {
			t.Fatalf("SDS file names %q, the listener asks for %q", cert.GetName(), sds[0].GetName())
		}
		tc := cert.GetTlsCertificate()
		if tc.GetCertificateChain().GetFilename() != GatewayCertDir+"/tls.crt" || tc.GetPrivateKey().GetFilename() != GatewayCertDir+"/tls.key" ||
			tc.GetWatchedDirectory().GetPath() != GatewayCertDir {
			t.Fatalf("certificate SDS %v does not read and watch %s", tc, GatewayCertDir)
		}
		vsds := common.GetValidationContextSdsSecretConfig()
		if ctx.GetRequireClientCertificate().GetValue() != p.Listener.ClientCA || (vsds != nil) != p.Listener.ClientCA {
			t.Fatalf("clientCA=%v but require_client_certificate=%v, validation SDS=%v", p.Listener.ClientCA, ctx.GetRequireClientCertificate(), vsds)
		}
		if !p.Listener.ClientCA {
			return
		}
		v := parseSDS(t, files[sdsKeyOf(t, vsds.GetSdsConfig().GetPathConfigSource().GetPath())])
		vc := v.GetValidationContext()
		if v.GetName() != vsds.GetName() || vc.GetTrustedCa().GetFilename() != ClientTrustDir+"/ca.crt" || vc.GetWatchedDirectory().GetPath() != ClientTrustDir {
			t.Fatalf("validation SDS %v does not trust %s/ca.crt", v, ClientTrustDir)
		}
		if got := vc.GetCrl().GetFilename(); (got == ClientTrustDir+"/crl.pem") != p.Listener.CRL || (got != "") != p.Listener.CRL {
			t.Fatalf("crl=%v but the validation context's CRL is %q", p.Listener.CRL, got)
		}
	})
}

// sdsKeyOf is the ConfigMap key an SDS path names; it must be a file of
// the config mount.
func sdsKeyOf(t fataler, path string) string {
	t.Helper()
	key, ok := strings.CutPrefix(path, ConfigMount+"/")
	if !ok || strings.Contains(key, "/") {
		t.Fatalf("SDS path %q is not a file of %s", path, ConfigMount)
	}
	return key
}

// TestFilesArePureFunctionOfInstanceAndPosture: equal inputs give equal
// files, different ones different files.
func TestFilesArePureFunctionOfInstanceAndPosture(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genParams().Draw(t, "p")
		p.Listener = genListener().Draw(t, "pl")
		q := genParams().Draw(t, "q")
		q.Listener = genListener().Draw(t, "ql")
		a, err := Files(p)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Files(p)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(a, again); d != "" {
			t.Fatalf("Files(%+v) differs between calls:\n%s", p, d)
		}
		b, err := Files(q)
		if err != nil {
			t.Fatal(err)
		}
		if same := cmp.Equal(meaningOf(p), meaningOf(q)); same != cmp.Equal(a, b) {
			t.Fatalf("inputs equal=%v but files equal=%v\np=%+v\nq=%+v", same, !same, p, q)
		}
	})
}

// meaningOf is what Files may depend on: the inputs with their defaults,
// the routes that differ from the default (the others are dropped), and
// when the listener is closed, only what the clusters show: whether any
// engine is reached over TLS, with a CRL or not, and then the namespace
// and cluster domain its certificates are matched against.
func meaningOf(p Params) Params {
	p = withDefaults(p)
	p.Upstream.Routes = p.Upstream.effectiveRoutes()
	if p.Listener.Closed {
		tls := p.Upstream.UsesTLS()
		p.Upstream = Upstream{TLS: tls, CRL: p.Upstream.CRL}
		if !tls {
			p.Namespace, p.ClusterDomain = "", ""
		}
	}
	return p
}

// TestListenerPostureRefused: a posture the instance cannot mean is an
// error naming the field, never a config.
func TestListenerPostureRefused(t *testing.T) {
	for name, l := range map[string]Listener{
		"ClosedWithTLS":   {Closed: true, TLS: true},
		"ClientCAWithout": {ClientCA: true},
		"CRLWithoutCA":    {TLS: true, CRL: true},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Files(Params{Namespace: "analytics", Listener: l})
			if err == nil || !strings.Contains(err.Error(), "spec.tls.gateway") {
				t.Fatalf("Files(%+v) = %v, want an error naming spec.tls.gateway", l, err)
			}
		})
	}
}

// TestClosedListenerKeepsStats: a closed gateway still answers its probes
// and its scrape, so its pods are Ready while the client port refuses.
func TestClosedListenerKeepsStats(t *testing.T) {
	y, err := Config(Params{Namespace: "analytics", Listener: Listener{Closed: true}})
	if err != nil {
		t.Fatal(err)
	}
	ls := parse(t, y).GetStaticResources().GetListeners()
	if len(ls) != 1 || ls[0].GetName() != statsListenerName {
		t.Fatalf("closed config listeners = %v, want only %s", names(ls), statsListenerName)
	}
}

func names(ls []*listenerv3.Listener) []string {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, l.GetName())
	}
	return out
}
