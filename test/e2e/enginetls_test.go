package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"

	// The typed configs envoy.yaml packs in Anys: protojson resolves an
	// Any only by a type linked into the binary.
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/stream/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/dynamic_forward_proxy/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/dynamic_forward_proxy/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/health_check/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
)

// What engine TLS puts on the objects it composes.
const (
	// annotationEngineTLS marks a TLS generation's StatefulSet (its TLS as
	// JSON); a plain generation's has none.
	annotationEngineTLS     = "firebolt.io/engine-tls"
	annotationEngineTLSHash = "firebolt.io/engine-tls-hash"
	// annotationGatewayRoute on the routing Service: how the engine asks
	// the gateway to reach it.
	annotationGatewayRoute = "firebolt.io/gateway-route"
	// annotationTrustCAs on the bundle: the fingerprints it holds.
	annotationTrustCAs = "firebolt.io/engine-trust-cas"

	engineTLSMountPath = "/secrets/tls/engine"
	engineCAFile       = "/etc/envoy-tls/engine-ca/ca.crt"
	engineCRLFile      = "/etc/envoy-tls/engine-crl/crl.pem"

	// observeEvery is how often the engine TLS recorder looks. The windows
	// it must not miss last a gateway rollout (seconds).
	observeEvery = 250 * time.Millisecond
)

// TestEngineTLSPerGeneration: an instance with mutual TLS on its gateway
// and TLS to its engines, both from CA Issuers of the test's own. Every
// engine generation gets its own certificate, issued by cert-manager and
// mounted in its pods; the gateway trusts the CAs of the live generations
// (a bundle whose fingerprints the status publishes once every gateway pod
// runs it) and checks the engine CRL. A replicas edit, after the engine
// issuer's CA was rotated, rolls a generation with a new certificate under
// a new CA: the routing Service moves to it only once every gateway pod
// trusts that CA, which the test holds back by holding the gateway's new
// pods. That is asserted on every observation, from the first generation
// on (whenever the routing Service selects a TLS generation, the CA of that
// generation's certificate is in what the instance publishes to its
// engines as trusted, read after the Service), and in the order etcd
// stored the changes (the ConfigMap engines read lists the CA before the
// routing Service moves; the status, written just after it, lists it
// too).
func TestEngineTLSPerGeneration(t *testing.T) {
	s := newScenario(t, "engine-tls")
	ctx := s.ctx
	newCA := func(name string) harness.TestCA {
		ca, err := harness.NewTestCA(name)
		s.must(err)
		return ca
	}
	gatewayCA, engineCA, clientsCA := newCA("gateway-ca"), newCA("engine-ca"), newCA("clients-ca")
	clientsCRL, err := clientsCA.CRL(big.NewInt(7))
	s.must(err)
	engineCRL, err := engineCA.CRL(big.NewInt(11))
	s.must(err)
	s.caIssuer("gateway-ca", gatewayCA)
	s.caIssuer("engine-ca", engineCA)
	s.secret("clients-ca", map[string][]byte{"ca.crt": clientsCA.Cert})
	s.secret("clients-crl", map[string][]byte{"crl.pem": clientsCRL})
	s.secret("engines-crl", map[string][]byte{"crl.pem": engineCRL})

	// The gateway's pods are held, and released as they come unless the
	// test pauses it: so it can keep a gateway rollout from completing.
	gateway := s.autoRelease("firebolt.io/component=gateway,firebolt.io/instance=demo")
	inst := s.instance("demo")
	set(t, inst, map[string]any{harness.HoldLabel: "true"}, "spec", "gateway", "template", "metadata", "labels")
	set(t, inst, map[string]any{
		"gateway": map[string]any{
			"enabled":           true,
			"certManager":       map[string]any{"issuerRef": map[string]any{"name": "gateway-ca", "kind": "Issuer"}},
			"dnsNames":          []any{"firebolt.example.com"},
			"clientCASecretRef": map[string]any{"name": "clients-ca"},
			"crlSecretRef":      map[string]any{"name": "clients-crl"},
		},
		"engine": map[string]any{
			"enabled":      true,
			"certManager":  map[string]any{"issuerRef": map[string]any{"name": "engine-ca", "kind": "Issuer"}},
			"crlSecretRef": map[string]any{"name": "engines-crl"},
		},
	}, "spec", "tls")
	s.apply(inst)
	s.waitInstanceReady(inst)
	s.waitGatewayTLS(inst, "MutualTLS")
	s.waitInstanceCondition(inst, "EngineTLSReady", "True", "Ready")
	xr := s.compositeName(inst)

	// The gateway: its certificate as the claim asked, mutual TLS against
	// clientCASecretRef with the CRL of crlSecretRef.
	v, err := s.gatewayView(ctx, inst)
	s.must(err)
	checkMutualTLSConfig(t, v.files)
	gwSec := s.certSecret("demo-gateway-tls")
	checkIssued(t, "the gateway certificate", gwSec.Data[corev1.TLSCertKey], gatewayCA,
		[]string{"demo-gateway", "demo-gateway." + s.ns, "demo-gateway." + s.ns + ".svc", "demo-gateway." + s.ns + ".svc.cluster.local", "firebolt.example.com"}, nil)

	// The engine, recorded from its first generation on.
	rec := s.recordEngineTLS("demo", "demo", xr, trustGate)
	eng := s.engine("demo", "demo", "", 1)
	s.apply(eng)
	st := s.waitStable(eng, -1)
	first := st.Active
	g1 := s.checkTLSGeneration("demo", first, engineCA)
	s.waitInstanceCondition(inst, "EngineTLSReady", "True", "Ready")
	s.checkEngineUpstream(inst, xr, "engines-crl", []string{g1.caFP})

	// A new CA behind the same issuer, then a replicas edit: generation
	// next gets a certificate under the new CA, which no gateway pod
	// trusts until the gateway rolls with it. The gateway's new pods are
	// held meanwhile.
	gateway.pause()
	versions := s.logVersions(s.switchObjects("demo", "demo", xr)...)
	engineCA2 := newCA("engine-ca-2")
	keypair, err := cp.Kube.CoreV1().Secrets(s.ns).Get(ctx, "engine-ca-keypair", metav1.GetOptions{})
	s.must(err)
	keypair.Data = map[string][]byte{"tls.crt": engineCA2.Cert, "tls.key": engineCA2.Key}
	_, err = cp.Kube.CoreV1().Secrets(s.ns).Update(ctx, keypair, metav1.UpdateOptions{})
	s.must(err)
	s.apply(withHold(t, s.engine("demo", "demo", "", 2)))
	st = s.waitEngine(eng, rolloutTimeout, "creating a new generation", func(e engineState) bool {
		return e.Phase == "creating" && e.Current > first
	})
	next := st.Current
	crt := s.waitCertificate(engineTLSName("demo", next), 0)
	fp2 := s.requestCA(crt)
	if fp2 == g1.caFP {
		t.Fatalf("generation %d's certificate was issued under the old CA (%s): the issuer's new CA was not picked up", next, fp2)
	}
	s.release("demo", next, 2)
	s.waitEngine(eng, rolloutTimeout, "waiting for the gateway to trust generation "+strconv.FormatInt(next, 10)+"'s CA", func(e engineState) bool {
		return e.EngineReady.Reason == "WaitingForGateway" && strings.Contains(e.EngineReady.Message, fp2)
	})
	// The gateway is rendered with the new CA but no pod of it runs: the
	// status does not list it, and the routing Service stays.
	engXR := s.compositeName(eng)
	calls := s.functionCalls(engXR)
	s.consistently(rolloutTimeout, "the routing Service on the old generation while the gateway's pods trusting the new CA are held", func() (bool, string) {
		g := s.generations("demo")
		trust, bundle := s.rolledTrust(xr), s.bundleFingerprints("demo")
		return g.Selector == first && !slices.Contains(trust, fp2), fmt.Sprintf("%s rolled trust %v bundle %v", g, trust, bundle)
	}, func() bool { return s.functionCalls(engXR) >= calls+3 })
	if b := s.bundleFingerprints("demo"); !slices.Contains(b, fp2) {
		t.Errorf("while the engine waits for it, the engine CA bundle lists %v, not the new CA %s", b, fp2)
	}

	gateway.resume()
	st = s.waitStable(eng, first)
	if st.Active != next {
		t.Fatalf("stable on generation %d, want %d", st.Active, next)
	}
	g2 := s.checkTLSGeneration("demo", next, engineCA2)
	if g2.leaf.SerialNumber.Cmp(g1.leaf.SerialNumber) == 0 {
		t.Errorf("generation %d serves the certificate of generation %d (serial %s)", next, first, g2.leaf.SerialNumber)
	}
	if g2.caFP != fp2 {
		t.Errorf("generation %d's CA is %s, want %s", next, g2.caFP, fp2)
	}
	// The old generation's certificate goes with it.
	s.wait(deletionTimeout, fmt.Sprintf("Certificate and Secret %s deleted with generation %d", engineTLSName("demo", first), first), func(ctx context.Context) (bool, string, error) {
		_, cerr := cp.Get(ctx, s.certificate(engineTLSName("demo", first)))
		_, serr := cp.Kube.CoreV1().Secrets(s.ns).Get(ctx, engineTLSName("demo", first), metav1.GetOptions{})
		return kerrors.IsNotFound(cerr) && kerrors.IsNotFound(serr), fmt.Sprintf("Certificate: %v; Secret: %v", harness.SeenErr(cerr), harness.SeenErr(serr)), nil
	})
	// The anchor was issued under the first CA, and is trusted beside it.
	s.waitInstanceCondition(inst, "EngineTLSReady", "True", "Ready")
	s.checkEngineUpstream(inst, xr, "engines-crl", slices.Sorted(slices.Values([]string{g1.caFP, fp2})))

	// In etcd's order: the instance published the new CA as trusted by
	// every gateway pod (in the ConfigMap engines read and in its status)
	// before the routing Service moved.
	var trusted, trustedStatus, moved uint64
	for _, v := range versions.stop(t) {
		switch {
		case strings.HasPrefix(v.Key, "ConfigMap ") && trusted == 0 && slices.Contains(publishedRolled(v.Obj).Trust, fp2):
			trusted = v.RV
		case strings.HasPrefix(v.Key, "composite ") && trustedStatus == 0 && slices.Contains(statusRolled(v.Obj).Trust, fp2):
			trustedStatus = v.RV
		case v.Key == "Service demo-service" && !v.Deleted && moved == 0 && selectedGeneration(v.Obj) == next:
			moved = v.RV
		}
	}
	t.Logf("by resourceVersion: CA %s published as trusted at %d (status at %d), routing Service moved to generation %d at %d", fp2[:12], trusted, trustedStatus, next, moved)
	// The status is written from the same response just after the
	// ConfigMap (Crossplane applies composed objects first): it must list
	// the CA too, not necessarily before the Service moved.
	if trusted == 0 || trustedStatus == 0 || moved == 0 || trusted > moved {
		t.Errorf("the routing Service moved to generation %d at resourceVersion %d; its CA was published to engines as trusted at %d (in status at %d): want it published before the move, and in status", next, moved, trusted, trustedStatus)
	}

	obs := rec.stop(t)
	gated := 0
	for _, o := range obs {
		if g, ok := o.Gens[next]; ok && g.TLS && g.CA == fp2 && !slices.Contains(o.Post.Published.Trust, fp2) {
			gated++
			if o.Selector == next {
				t.Errorf("observed the routing Service on generation %d before its CA was trusted: %s", next, o)
			}
		}
	}
	if gated == 0 {
		t.Errorf("no observation saw generation %d with its CA untrusted: the gate was never observed", next)
	}
}

// TestEngineTLSProtocolSwitch: a plain engine of an instance that enables
// engine TLS rolls to a TLS generation through its next Service: the
// engine composes <e>-next selecting the TLS generation and asks for it,
// the gateway reaches the engine by it, only then does the routing Service
// move, and <e>-next goes once the gateway is back on the routing Service.
// Disabling engine TLS takes the same steps back to plain HTTP. The steps
// are checked in the order etcd stored them (checkSwitch); and on every
// observation once the engine was first stable, the Service the instance
// publishes to its engines as every gateway pod's route to the engine
// exists and selects a live generation serving the protocol it names.
func TestEngineTLSProtocolSwitch(t *testing.T) {
	s := newScenario(t, "engine-tls-switch")
	inst := s.instance("demo")
	s.apply(inst)
	s.waitInstanceReady(inst)
	xr := s.compositeName(inst)
	eng := s.engine("demo", "demo", "", 1)
	s.apply(eng)
	st := s.waitStable(eng, -1)
	plain := st.Active
	s.waitInstanceCondition(inst, "EngineTLSReady", "True", "Disabled")

	rec := s.recordEngineTLS("demo", "demo", xr, upstreamServes("demo"))
	versions := s.logVersions(s.switchObjects("demo", "demo", xr)...)
	set(t, inst, map[string]any{"engine": map[string]any{
		"enabled":     true,
		"certManager": map[string]any{"issuerRef": map[string]any{"name": harness.CAIssuer, "kind": harness.ClusterIssuerGVK.Kind}},
	}}, "spec", "tls")
	s.apply(inst)
	tlsGen := s.waitSwitched(inst, eng, xr, plain, true)
	rec.stop(t)
	checkSwitch(t, versions.stop(t), "demo", tlsGen, true)

	rec = s.recordEngineTLS("demo", "demo", xr, upstreamServes("demo"))
	versions = s.logVersions(s.switchObjects("demo", "demo", xr)...)
	set(t, inst, false, "spec", "tls", "engine", "enabled")
	s.apply(inst)
	back := s.waitSwitched(inst, eng, xr, tlsGen, false)
	rec.stop(t)
	checkSwitch(t, versions.stop(t), "demo", back, false)
}

// waitSwitched waits until the engine is stable on a generation after
// from serving TLS iff tls, the gateway reaches it by its routing Service
// in that protocol by default, <e>-next is gone and EngineTLSReady is True
// (Ready, or Disabled without TLS); it returns that generation.
func (s *scenario) waitSwitched(inst, eng *unstructured.Unstructured, xr string, from int64, tls bool) int64 {
	s.t.Helper()
	st := s.waitStable(eng, from)
	reason, route := "Disabled", ""
	if tls {
		reason, route = "Ready", "demo-service;tls"
	}
	s.waitInstanceCondition(inst, "EngineTLSReady", "True", reason)
	s.wait(rolloutTimeout, fmt.Sprintf("generation %d serving tls=%v behind demo-service, and demo-next gone", st.Active, tls), func(ctx context.Context) (bool, string, error) {
		sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(ctx, fmt.Sprintf("demo-g%d", st.Active), metav1.GetOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		svc, err := cp.Kube.CoreV1().Services(s.ns).Get(ctx, "demo-service", metav1.GetOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		_, nerr := cp.Kube.CoreV1().Services(s.ns).Get(ctx, "demo-next", metav1.GetOptions{})
		status, _, err := s.readRolled(ctx, "demo", xr)
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		_, isTLS := sts.Annotations[annotationEngineTLS]
		wantUp := (*upstreamView)(nil)
		if tls {
			wantUp = &upstreamView{TLS: true}
		}
		seen := fmt.Sprintf("sts tls=%v, demo-service selects %s route %q, demo-next: %v, rolled %s", isTLS,
			svc.Spec.Selector[labelGeneration], svc.Annotations[annotationGatewayRoute], harness.SeenErr(nerr), status)
		return isTLS == tls && svc.Spec.Selector[labelGeneration] == strconv.FormatInt(st.Active, 10) &&
			svc.Annotations[annotationGatewayRoute] == route && kerrors.IsNotFound(nerr) && status.Up.equal(wantUp), seen, nil
	})
	return st.Active
}

// checkSwitch checks the steps of a protocol switch to generation to
// (serving TLS iff tls) in the order etcd stored them: <e>-next selecting
// to and the routing Service asking for "<e>-next;<proto>" came first; then
// the instance published that every gateway pod reaches the engine by
// <e>-next; then the routing Service moved to generation to; then the
// instance published that no gateway pod reaches it by <e>-next any more;
// then <e>-next was deleted. The instance publishes in the ConfigMap
// engines read, which must come before the engine's step that follows,
// and in status.rolledEngineUpstream, written from the same responses just
// after, which must show both changes too.
func checkSwitch(t *testing.T, versions []objectVersion, engine string, to int64, tls bool) {
	t.Helper()
	proto := "plain"
	if tls {
		proto = "tls"
	}
	next, routing := engine+"-next", engine+"-service"
	nextRoute := routeView{Engine: engine, Service: next, TLS: tls}
	var nextUp, asked, moved, gone uint64
	// [0] the ConfigMap engines read, [1] the composite's status.
	var confirmed, unlisted [2]uint64
	for _, v := range versions {
		var up *upstreamView
		i, rolled := 0, false
		switch {
		case v.Key == "Service "+next && !v.Deleted && nextUp == 0 && selectedGeneration(v.Obj) == to:
			nextUp = v.RV
		case v.Key == "Service "+next && v.Deleted && moved != 0 && gone == 0:
			gone = v.RV
		case v.Key == "Service "+routing && !v.Deleted:
			if asked == 0 && v.Obj.GetAnnotations()[annotationGatewayRoute] == next+";"+proto {
				asked = v.RV
			}
			if moved == 0 && selectedGeneration(v.Obj) == to {
				moved = v.RV
			}
		case strings.HasPrefix(v.Key, "ConfigMap "):
			up, rolled = publishedRolled(v.Obj).Up, true
		case strings.HasPrefix(v.Key, "composite "):
			up, i, rolled = statusRolled(v.Obj).Up, 1, true
		}
		if !rolled {
			continue
		}
		if confirmed[i] == 0 && up.has(nextRoute) {
			confirmed[i] = v.RV
		}
		if confirmed[i] != 0 && unlisted[i] == 0 && !up.names(engine, next) {
			unlisted[i] = v.RV
		}
	}
	steps := fmt.Sprintf("%s selecting %d at %d, routing Service asking for %s;%s at %d, the instance publishing the route at %d (status at %d), "+
		"routing Service moved at %d, the instance dropping the route at %d (status at %d), %s deleted at %d",
		next, to, nextUp, next, proto, asked, confirmed[0], confirmed[1], moved, unlisted[0], unlisted[1], next, gone)
	t.Logf("switch to %s, by resourceVersion: %s", proto, steps)
	// What engines read orders the steps; the status, written from the
	// same responses just after, must show both changes of the route.
	ordered := []uint64{max(nextUp, asked), confirmed[0], moved, unlisted[0], gone}
	if slices.Contains(ordered, 0) || !slices.IsSorted(ordered) || len(slices.Compact(slices.Clone(ordered))) != len(ordered) {
		t.Errorf("switch to %s, as the ConfigMap engines read has it: want each step strictly after the one before: %s", proto, steps)
	}
	if confirmed[1] == 0 || unlisted[1] == 0 || unlisted[1] < confirmed[1] {
		t.Errorf("switch to %s: status.rolledEngineUpstream must list the route to %s and then drop it: %s", proto, next, steps)
	}
}

// selectedGeneration is the generation a Service selects, -1 when none.
func selectedGeneration(svc *unstructured.Unstructured) int64 {
	sel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
	g, err := strconv.ParseInt(sel[labelGeneration], 10, 64)
	if err != nil {
		return -1
	}
	return g
}

// objectVersion is one version of a watched object.
type objectVersion struct {
	// RV is its resourceVersion: etcd's revision of the change. Every
	// object here is stored in one etcd, so versions of different objects
	// are ordered by it.
	RV      uint64
	Key     string
	Deleted bool
	Obj     *unstructured.Unstructured
}

// watchedObject names one object to follow.
type watchedObject struct {
	Key       string
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
}

// versionLog keeps every version of some objects, through watches
// resumed from the last version seen, so that no change is missed however
// quickly the next follows it.
type versionLog struct {
	mu       sync.Mutex
	versions []objectVersion
	relists  int
	cancel   context.CancelFunc
	done     sync.WaitGroup
}

// logVersions follows the objects until stop, or the scenario's end.
func (s *scenario) logVersions(objs ...watchedObject) *versionLog {
	ctx, cancel := context.WithCancel(s.ctx)
	l := &versionLog{cancel: cancel}
	for _, o := range objs {
		ri, err := cp.Resource(o.GVK, o.Namespace)
		s.must(err)
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			l.follow(ctx, ri, o)
		}()
	}
	s.t.Cleanup(l.halt)
	return l
}

func (l *versionLog) halt() {
	l.cancel()
	l.done.Wait()
}

func (l *versionLog) follow(ctx context.Context, ri dynamic.ResourceInterface, o watchedObject) {
	opts := metav1.ListOptions{FieldSelector: "metadata.name=" + o.Name}
	rv := ""
	for ctx.Err() == nil {
		if rv == "" {
			lst, err := ri.List(ctx, opts)
			if err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			l.mu.Lock()
			l.relists++
			l.mu.Unlock()
			for i := range lst.Items {
				l.record(o.Key, false, &lst.Items[i])
			}
			rv = lst.GetResourceVersion()
		}
		wo := opts
		wo.ResourceVersion, wo.TimeoutSeconds = rv, ptrTo(int64(20))
		wi, err := ri.Watch(ctx, wo)
		if err != nil {
			if kerrors.IsGone(err) || kerrors.IsResourceExpired(err) {
				rv = ""
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for ev := range wi.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if ev.Type == watch.Error || !ok {
				rv = "" // the watch cannot resume: list again
				break
			}
			if ev.Type == watch.Bookmark {
				rv = u.GetResourceVersion()
				continue
			}
			l.record(o.Key, ev.Type == watch.Deleted, u)
			rv = u.GetResourceVersion()
		}
		wi.Stop()
	}
}

func (l *versionLog) record(key string, deleted bool, u *unstructured.Unstructured) {
	rv, err := strconv.ParseUint(u.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range l.versions {
		if v.Key == key && v.RV == rv && v.Deleted == deleted {
			return
		}
	}
	l.versions = append(l.versions, objectVersion{RV: rv, Key: key, Deleted: deleted, Obj: u})
}

// stop ends the log and returns the versions in etcd's order.
func (l *versionLog) stop(t *testing.T) []objectVersion {
	t.Helper()
	l.halt()
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.versions)
	slices.SortStableFunc(out, func(a, b objectVersion) int { return cmpUint(a.RV, b.RV) })
	if l.relists > 0 {
		// Each follower lists once to start; more means a watch could not
		// resume and versions in between may be missing.
		t.Logf("version log: %d lists for its followers", l.relists)
	}
	return out
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func ptrTo[T any](v T) *T { return &v }

// switchObjects are what a switch's order is read from: the engine's two
// Services, the instance's ConfigMap for engines and its composite.
func (s *scenario) switchObjects(engine, inst, xr string) []watchedObject {
	svc := schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	return []watchedObject{
		{Key: "Service " + engine + "-service", GVK: svc, Namespace: s.ns, Name: engine + "-service"},
		{Key: "Service " + engine + "-next", GVK: svc, Namespace: s.ns, Name: engine + "-next"},
		{Key: "ConfigMap " + inst + "-engines", GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespace: s.ns, Name: inst + "-engines"},
		{Key: "composite " + xr, GVK: harness.XInstanceGVK, Name: xr},
	}
}

// caIssuer creates a CA Issuer named name signing with ca.
func (s *scenario) caIssuer(name string, ca harness.TestCA) {
	s.t.Helper()
	_, err := cp.Kube.CoreV1().Secrets(s.ns).Create(s.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-keypair"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": ca.Cert, "tls.key": ca.Key},
	}, metav1.CreateOptions{})
	s.must(err)
	s.apply(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
		"metadata": map[string]any{"name": name, "namespace": s.ns},
		"spec":     map[string]any{"ca": map[string]any{"secretName": name + "-keypair"}},
	}})
}

func (s *scenario) secret(name string, data map[string][]byte) {
	s.t.Helper()
	_, err := cp.Kube.CoreV1().Secrets(s.ns).Create(s.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{})
	s.must(err)
}

// waitInstanceCondition waits for the instance claim's condition typ with
// status and reason.
func (s *scenario) waitInstanceCondition(inst *unstructured.Unstructured, typ, status, reason string) {
	s.t.Helper()
	s.wait(rolloutTimeout, fmt.Sprintf("%s %s=%s (%s)", inst.GetName(), typ, status, reason), func(context.Context) (bool, string, error) {
		u, err := s.get(inst)
		if err != nil || u == nil {
			return false, fmt.Sprintf("claim: %v", err), nil
		}
		c := harness.Condition(u, typ)
		return c.Status == status && c.Reason == reason, c.String(), nil
	})
}

// engineTLSName is generation gen's Certificate and Secret.
func engineTLSName(engine string, gen int64) string {
	return fmt.Sprintf("%s-g%d-engine-tls", engine, gen)
}

// pemFingerprint is how the instance fingerprints a CA: the hex SHA-256
// of its PEM, trimmed.
func pemFingerprint(b []byte) string {
	sum := sha256.Sum256(bytes.TrimSpace(b))
	return hex.EncodeToString(sum[:])
}

// requestCA is the fingerprint of the CA of the Certificate's current
// revision's CertificateRequest (status.ca).
func (s *scenario) requestCA(crt *unstructured.Unstructured) string {
	s.t.Helper()
	req, err := cp.Get(s.ctx, s.request(fmt.Sprintf("%s-%d", crt.GetName(), revisionOf(crt))))
	s.must(err)
	ca := bytesField(s.t, req, "status", "ca")
	if len(ca) == 0 {
		s.t.Fatalf("CertificateRequest %s has no status.ca", req.GetName())
	}
	return pemFingerprint(ca)
}

// checkIssued checks a PEM certificate names exactly names, is for server
// auth and verifies against ca for each of them and for each of hosts
// (names a wildcard covers).
func checkIssued(t *testing.T, what string, certPEM []byte, ca harness.TestCA, names, hosts []string) *x509.Certificate {
	t.Helper()
	cert := parseCert(t, what, certPEM)
	if !slices.Equal(slices.Sorted(slices.Values(cert.DNSNames)), slices.Sorted(slices.Values(names))) {
		t.Errorf("%s names %v, want %v", what, cert.DNSNames, names)
	}
	if !slices.Equal(cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("%s extended key usages %v, want server auth only", what, cert.ExtKeyUsage)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Certificate())
	for _, name := range append(slices.Clone(names), hosts...) {
		if strings.HasPrefix(name, "*.") {
			continue
		}
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("%s does not verify for %s against %s: %v", what, name, ca.Certificate().Subject.CommonName, err)
		}
	}
	return cert
}

// tlsGeneration is what checkTLSGeneration read of a generation.
type tlsGeneration struct {
	leaf *x509.Certificate
	caFP string
}

// checkTLSGeneration checks generation gen of engine serves TLS with a
// certificate of its own: its Certificate issued (the request carries the
// Secret's certificate and CA, for the Secret's key), for the names its
// pods are reached by, chained to ca; the Secret mounted in the engine
// container at /secrets/tls/engine; the StatefulSet annotated; and
// config.yaml's query listener serving TLS.
func (s *scenario) checkTLSGeneration(engine string, gen int64, ca harness.TestCA) tlsGeneration {
	s.t.Helper()
	t := s.t
	name := engineTLSName(engine, gen)
	crt := s.waitCertificate(name, 0)
	wantLabels := map[string]string{"firebolt.io/instance": "demo", "firebolt.io/component": "engine-tls", labelEngine: engine, labelGeneration: strconv.FormatInt(gen, 10)}
	for k, v := range wantLabels {
		if crt.GetLabels()[k] != v {
			t.Errorf("Certificate %s label %s = %q, want %q", name, k, crt.GetLabels()[k], v)
		}
	}
	sec := s.certSecret(name)
	s.checkRequest(crt, sec, keyFingerprint(t, sec.Data[corev1.TLSPrivateKeyKey]))
	host := func(svc string) string { return svc + "." + s.ns + ".svc.cluster.local" }
	headless := fmt.Sprintf("%s-g%d-hl", engine, gen)
	leaf := checkIssued(t, "the certificate of generation "+strconv.FormatInt(gen, 10), sec.Data[corev1.TLSCertKey], ca,
		[]string{"*." + host(headless), host(engine + "-service"), "localhost"},
		[]string{fmt.Sprintf("%s-g%d-0.%s", engine, gen, host(headless))})
	caPEM := sec.Data[corev1.ServiceAccountRootCAKey]
	if c := parseCert(t, name+" ca.crt", caPEM); !bytes.Equal(c.Raw, ca.Certificate().Raw) {
		t.Errorf("Secret %s ca.crt is %s, want the issuer's CA %s", name, c.Subject, ca.Certificate().Subject)
	}

	sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(s.ctx, fmt.Sprintf("%s-g%d", engine, gen), metav1.GetOptions{})
	s.must(err)
	var recorded struct {
		Instance string `json:"instance"`
		Issuer   struct {
			IssuerRef struct {
				Name string `json:"name"`
				Kind string `json:"kind"`
			} `json:"issuerRef"`
		} `json:"issuer"`
	}
	if err := json.Unmarshal([]byte(sts.Annotations[annotationEngineTLS]), &recorded); err != nil || recorded.Instance != "demo" || recorded.Issuer.IssuerRef.Name != "engine-ca" {
		t.Errorf("StatefulSet %s annotation %s = %q (%v), want instance demo and issuer engine-ca", sts.Name, annotationEngineTLS, sts.Annotations[annotationEngineTLS], err)
	}
	if sts.Annotations[annotationEngineTLSHash] == "" {
		t.Errorf("StatefulSet %s has no %s annotation", sts.Name, annotationEngineTLSHash)
	}
	checkMounted(t, sts, name)

	cm, err := cp.Kube.CoreV1().ConfigMaps(s.ns).Get(s.ctx, fmt.Sprintf("%s-g%d-config", engine, gen), metav1.GetOptions{})
	s.must(err)
	var cfg struct {
		Endpoints struct {
			HTTP struct {
				Listeners []struct {
					Port int               `json:"port"`
					TLS  map[string]string `json:"tls"`
				} `json:"listeners"`
			} `json:"http"`
		} `json:"endpoints"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &cfg); err != nil {
		t.Errorf("ConfigMap %s config.yaml: %v", cm.Name, err)
	}
	if l := cfg.Endpoints.HTTP.Listeners; len(l) != 1 || l[0].Port != 3473 || l[0].TLS["private_key_file"] != engineTLSMountPath+"/tls.key" || l[0].TLS["certificate_file"] == "" {
		t.Errorf("ConfigMap %s listeners %+v, want one on 3473 over TLS with the mounted key", cm.Name, l)
	}
	return tlsGeneration{leaf: leaf, caFP: pemFingerprint(caPEM)}
}

// checkMounted checks the engine container mounts Secret secret at
// /secrets/tls/engine.
func checkMounted(t *testing.T, sts *appsv1.StatefulSet, secret string) {
	t.Helper()
	spec := sts.Spec.Template.Spec
	vol := ""
	for _, v := range spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			vol = v.Name
		}
	}
	if vol == "" {
		t.Errorf("StatefulSet %s mounts no volume of Secret %s", sts.Name, secret)
		return
	}
	for _, c := range spec.Containers {
		for _, m := range c.VolumeMounts {
			if m.Name == vol && m.MountPath == engineTLSMountPath && c.Name == "engine" {
				return
			}
		}
	}
	t.Errorf("StatefulSet %s: volume %s (Secret %s) not mounted at %s in container engine", sts.Name, vol, secret, engineTLSMountPath)
}

// checkEngineUpstream checks the gateway's side once engine TLS is Ready:
// envoy.yaml parses as a valid Bootstrap whose dfp_tls cluster trusts the
// mounted engine CA bundle and checks the mounted CRL; the Deployment
// mounts the bundle (demo-engine-ca-bundle, possibly suffixed after its
// content) and the CRL Secret crl; the bundle holds exactly the
// CAs trust lists (sorted fingerprints), and so do its annotation and
// status.rolledEngineTrustCAs.
func (s *scenario) checkEngineUpstream(inst *unstructured.Unstructured, xr, crl string, trust []string) {
	s.t.Helper()
	t := s.t
	v, err := s.gatewayView(s.ctx, inst)
	s.must(err)
	b := parseBootstrap(t, v.files["envoy.yaml"])
	var up *tlsv3.UpstreamTlsContext
	for _, c := range b.GetStaticResources().GetClusters() {
		if c.GetName() == "dfp_tls" {
			up = &tlsv3.UpstreamTlsContext{}
			if err := c.GetTransportSocket().GetTypedConfig().UnmarshalTo(up); err != nil {
				t.Fatalf("cluster dfp_tls's transport socket: %v", err)
			}
		}
	}
	if up == nil {
		t.Fatal("envoy.yaml has no cluster dfp_tls")
	}
	vc := up.GetCommonTlsContext().GetValidationContext()
	if vc.GetTrustedCa().GetFilename() != engineCAFile || vc.GetCrl().GetFilename() != engineCRLFile {
		t.Errorf("dfp_tls trusts %q and checks %q, want %s and %s", vc.GetTrustedCa().GetFilename(), vc.GetCrl().GetFilename(), engineCAFile, engineCRLFile)
	}
	mounts := map[string]string{}
	for _, c := range v.dep.Spec.Template.Spec.Containers {
		for _, m := range c.VolumeMounts {
			mounts[m.Name] = m.MountPath
		}
	}
	ca, crlVol := v.volumes["engine-ca"], v.volumes["engine-crl"]
	if ca.ConfigMap == nil || !isEngineCABundle("demo", ca.ConfigMap.Name) || mounts["engine-ca"] != "/etc/envoy-tls/engine-ca" {
		t.Fatalf("the gateway mounts engine-ca %+v at %q, want a ConfigMap demo-engine-ca-bundle… at /etc/envoy-tls/engine-ca", ca, mounts["engine-ca"])
	}
	if crlVol.Secret == nil || crlVol.Secret.SecretName != crl || mounts["engine-crl"] != "/etc/envoy-tls/engine-crl" {
		t.Errorf("the gateway mounts engine-crl %+v at %q, want Secret %s at /etc/envoy-tls/engine-crl", crlVol, mounts["engine-crl"], crl)
	}
	cm, err := cp.Kube.CoreV1().ConfigMaps(s.ns).Get(s.ctx, ca.ConfigMap.Name, metav1.GetOptions{})
	s.must(err)
	var inBundle []string
	rest := []byte(cm.Data["ca.crt"])
	for {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		inBundle = append(inBundle, pemFingerprint(pem.EncodeToMemory(block)))
	}
	slices.Sort(inBundle)
	rolled := s.rolledTrust(xr)
	if !slices.Equal(inBundle, trust) || cm.Annotations[annotationTrustCAs] != strings.Join(trust, ",") || !slices.Equal(rolled, trust) {
		t.Errorf("engine CAs: the bundle holds %v, its annotation says %q, status.rolledEngineTrustCAs %v; want %v", inBundle, cm.Annotations[annotationTrustCAs], rolled, trust)
	}
}

// parseBootstrap reads envoy.yaml as Envoy does (YAML, then JSON into
// the Bootstrap, unknown fields refused) and runs the generated
// validation on it and on every message packed in it.
func parseBootstrap(t *testing.T, y string) *bootstrapv3.Bootstrap {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("envoy.yaml: %v", err)
	}
	b := &bootstrapv3.Bootstrap{}
	if err := protojson.Unmarshal(j, b); err != nil {
		t.Fatalf("envoy.yaml is not a Bootstrap: %v", err)
	}
	if err := validateEnvoy(b); err != nil {
		t.Fatalf("envoy.yaml: %v", err)
	}
	return b
}

// validateEnvoy runs m's ValidateAll, then that of every message packed in
// an Any within it, which ValidateAll does not open.
func validateEnvoy(m proto.Message) error {
	if v, ok := m.(interface{ ValidateAll() error }); ok {
		if err := v.ValidateAll(); err != nil {
			return err
		}
	}
	return packed(m.ProtoReflect())
}

func packed(m protoreflect.Message) error {
	if a, ok := m.Interface().(*anypb.Any); ok {
		inner, err := a.UnmarshalNew()
		if err == nil {
			err = validateEnvoy(inner)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", a.GetTypeUrl(), err)
		}
		return nil
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					err = packed(mv.Message())
					return err == nil
				})
			}
		case fd.IsList():
			for i := 0; fd.Message() != nil && i < v.List().Len() && err == nil; i++ {
				err = packed(v.List().Get(i).Message())
			}
		case fd.Message() != nil:
			err = packed(v.Message())
		}
		return err == nil
	})
	return err
}

// rolledTrust is the composite's status.rolledEngineTrustCAs.
func (s *scenario) rolledTrust(xr string) []string {
	s.t.Helper()
	status, _, err := s.readRolled(s.ctx, "demo", xr)
	s.must(err)
	return status.Trust
}

// isEngineCABundle reports whether name is instance's engine CA bundle:
// <instance>-engine-ca-bundle, or that followed by a suffix naming its
// content.
func isEngineCABundle(instance, name string) bool {
	return name == instance+"-engine-ca-bundle" || strings.HasPrefix(name, instance+"-engine-ca-bundle-")
}

// bundleFingerprints are the fingerprints listed by the annotation of the
// engine CA bundle the gateway's pod template mounts (whether or not its
// pods run that template yet).
func (s *scenario) bundleFingerprints(inst string) []string {
	dep, err := cp.Kube.AppsV1().Deployments(s.ns).Get(s.ctx, inst+"-gateway", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	for _, v := range dep.Spec.Template.Spec.Volumes {
		if v.Name != "engine-ca" || v.ConfigMap == nil {
			continue
		}
		cm, err := cp.Kube.CoreV1().ConfigMaps(s.ns).Get(s.ctx, v.ConfigMap.Name, metav1.GetOptions{})
		if err != nil || cm.Annotations[annotationTrustCAs] == "" {
			return nil
		}
		return strings.Split(cm.Annotations[annotationTrustCAs], ",")
	}
	return nil
}

// upstreamView is status.rolledEngineUpstream.
type upstreamView struct {
	TLS    bool        `json:"tls,omitempty"`
	Routes []routeView `json:"routes,omitempty"`
}

type routeView struct {
	Engine  string `json:"engine"`
	Service string `json:"service"`
	TLS     bool   `json:"tls,omitempty"`
}

func (u *upstreamView) String() string {
	if u == nil {
		return "plain"
	}
	var b strings.Builder
	if u.TLS {
		b.WriteString("tls")
	} else {
		b.WriteString("plain")
	}
	for _, r := range u.Routes {
		fmt.Fprintf(&b, " %s→%s;tls=%v", r.Engine, r.Service, r.TLS)
	}
	return b.String()
}

func (u *upstreamView) equal(o *upstreamView) bool { return u.String() == o.String() }

// route is how u reaches engine: its route, else its routing Service in
// the default protocol (plain without an upstream).
func (u *upstreamView) route(engine string) (string, bool) {
	if u == nil {
		return engine + "-service", false
	}
	for _, r := range u.Routes {
		if r.Engine == engine {
			return r.Service, r.TLS
		}
	}
	return engine + "-service", u.TLS
}

func (u *upstreamView) has(r routeView) bool { return u != nil && slices.Contains(u.Routes, r) }

// names reports whether u reaches engine by Service svc.
func (u *upstreamView) names(engine, svc string) bool {
	got, _ := u.route(engine)
	return got == svc
}

// rolledView is what an instance says every gateway pod runs.
type rolledView struct {
	Trust []string
	Up    *upstreamView
}

func (r rolledView) String() string {
	short := make([]string, len(r.Trust))
	for i, fp := range r.Trust {
		short[i] = fp[:min(12, len(fp))]
	}
	return fmt.Sprintf("trust %v upstream %s", short, r.Up)
}

func (r rolledView) equal(o rolledView) bool {
	return r.String() == o.String() && slices.Equal(r.Trust, o.Trust)
}

// readRolled reads what the instance says every gateway pod runs, twice:
// the composite's status, and its copy in the ConfigMap <instance>-engines
// that engines read it from. Crossplane applies that ConfigMap, built from
// the same function response, just before it writes the composite's
// status, so the ConfigMap can be a moment ahead of the status.
func (s *scenario) readRolled(ctx context.Context, inst, xr string) (status, published rolledView, err error) {
	ri, err := cp.Resource(harness.XInstanceGVK, "")
	if err != nil {
		return status, published, err
	}
	u, err := ri.Get(ctx, xr, metav1.GetOptions{})
	if err != nil {
		return status, published, err
	}
	if status, err = statusRolledErr(u); err != nil {
		return status, published, err
	}
	cm, err := cp.Kube.CoreV1().ConfigMaps(s.ns).Get(ctx, inst+"-engines", metav1.GetOptions{})
	if err != nil {
		return status, published, err
	}
	published, err = rolledOfJSON([]byte(cm.Data["instance"]))
	if err != nil {
		return status, published, fmt.Errorf("ConfigMap %s: %w", cm.Name, err)
	}
	return status, published, nil
}

// rolledOfJSON reads the rolled fields of an instance's status, or of the
// state it publishes for engines (the same field names).
func rolledOfJSON(b []byte) (rolledView, error) {
	var st struct {
		RolledEngineTrustCAs []string      `json:"rolledEngineTrustCAs"`
		RolledEngineUpstream *upstreamView `json:"rolledEngineUpstream"`
	}
	err := json.Unmarshal(b, &st)
	return rolledView{Trust: st.RolledEngineTrustCAs, Up: st.RolledEngineUpstream}, err
}

func statusRolledErr(xr *unstructured.Unstructured) (rolledView, error) {
	raw, _, _ := unstructured.NestedMap(xr.Object, "status")
	b, err := json.Marshal(raw)
	if err != nil {
		return rolledView{}, err
	}
	return rolledOfJSON(b)
}

// statusRolled is the rolled fields of a composite instance's status.
func statusRolled(xr *unstructured.Unstructured) rolledView {
	r, _ := statusRolledErr(xr)
	return r
}

// publishedRolled is the rolled fields of the state in an instance's
// ConfigMap for engines.
func publishedRolled(cm *unstructured.Unstructured) rolledView {
	data, _, _ := unstructured.NestedString(cm.Object, "data", "instance")
	r, _ := rolledOfJSON([]byte(data))
	return r
}

// genView is one generation as an observation saw it.
type genView struct {
	// TLS: its StatefulSet carries the engine-tls annotation.
	TLS         bool
	Terminating bool
	// CA is the fingerprint of status.ca of the CertificateRequest of its
	// Certificate's current revision (else of its latest request with
	// one); "" when none.
	CA string
}

// tlsObservation is one look at an engine and its instance. Pre is read
// before the engine's objects, Post after them.
type tlsObservation struct {
	At time.Duration
	// Selector and Next are the generations demo-service and demo-next
	// select, -1 when absent; Route is demo-service's route annotation.
	Selector, Next int64
	Route          string
	Gens           map[int64]genView
	Pre, Post      struct{ Status, Published rolledView }
	Engine         engineState
}

func (o tlsObservation) key() string {
	gens := make([]string, 0, len(o.Gens))
	for _, g := range slices.Sorted(func(yield func(int64) bool) {
		for k := range o.Gens {
			if !yield(k) {
				return
			}
		}
	}) {
		v := o.Gens[g]
		ca := v.CA
		if len(ca) > 12 {
			ca = ca[:12]
		}
		gens = append(gens, fmt.Sprintf("g%d(tls=%v ca=%s del=%v)", g, v.TLS, ca, v.Terminating))
	}
	return fmt.Sprintf("service→%d %q next→%d gens %v | pre status %s published %s | post status %s published %s | %s %s %s",
		o.Selector, o.Route, o.Next, gens, o.Pre.Status, o.Pre.Published, o.Post.Status, o.Post.Published,
		o.Engine.Phase, o.Engine.EngineReady.Reason, o.Engine.EngineReady.Message)
}

func (o tlsObservation) String() string {
	return fmt.Sprintf("+%s %s", o.At.Round(time.Millisecond), o.key())
}

func observations(obs []tlsObservation) string {
	lines := make([]string, len(obs))
	for i, o := range obs {
		lines[i] = fmt.Sprintf("%3d %s", i, o)
	}
	return strings.Join(lines, "\n")
}

// observeEngineTLS reads, in this order: the instance's rolled state, the
// engine's Services, StatefulSets, Certificates and CertificateRequests,
// its claim, and the instance's rolled state again.
func (s *scenario) observeEngineTLS(ctx context.Context, engine, inst, xr string) (tlsObservation, error) {
	o := tlsObservation{Selector: -1, Next: -1, Gens: map[int64]genView{}}
	var err error
	if o.Pre.Status, o.Pre.Published, err = s.readRolled(ctx, inst, xr); err != nil {
		return o, err
	}
	sel := metav1.ListOptions{LabelSelector: labelEngine + "=" + engine}
	svcs, err := cp.Kube.CoreV1().Services(s.ns).List(ctx, sel)
	if err != nil {
		return o, err
	}
	for _, svc := range svcs.Items {
		g, perr := strconv.ParseInt(svc.Spec.Selector[labelGeneration], 10, 64)
		if perr != nil {
			g = -1
		}
		switch svc.Name {
		case engine + "-service":
			o.Selector, o.Route = g, svc.Annotations[annotationGatewayRoute]
		case engine + "-next":
			o.Next = g
		}
	}
	stss, err := cp.Kube.AppsV1().StatefulSets(s.ns).List(ctx, sel)
	if err != nil {
		return o, err
	}
	for _, sts := range stss.Items {
		g, perr := strconv.ParseInt(sts.Labels[labelGeneration], 10, 64)
		if perr != nil {
			continue
		}
		_, tls := sts.Annotations[annotationEngineTLS]
		o.Gens[g] = genView{TLS: tls, Terminating: sts.DeletionTimestamp != nil}
	}
	crts, err := cp.Resource(harness.CertificateGVK, s.ns)
	if err != nil {
		return o, err
	}
	cl, err := crts.List(ctx, sel)
	if err != nil {
		return o, err
	}
	current := map[string]bool{}
	for i := range cl.Items {
		current[fmt.Sprintf("%s-%d", cl.Items[i].GetName(), revisionOf(&cl.Items[i]))] = true
	}
	reqs, err := cp.Resource(harness.CertificateRequestGVK, s.ns)
	if err != nil {
		return o, err
	}
	rl, err := reqs.List(ctx, sel)
	if err != nil {
		return o, err
	}
	best := map[int64]int64{} // generation → rank of the request its CA came from
	for i := range rl.Items {
		r := &rl.Items[i]
		g, perr := strconv.ParseInt(r.GetLabels()[labelGeneration], 10, 64)
		b64, _, _ := unstructured.NestedString(r.Object, "status", "ca")
		if perr != nil || b64 == "" {
			continue
		}
		ca, derr := base64.StdEncoding.DecodeString(b64)
		if derr != nil {
			continue
		}
		rank, _ := strconv.ParseInt(r.GetAnnotations()[annotationRevision], 10, 64)
		if current[r.GetName()] {
			rank = 1 << 40
		}
		if prev, seen := best[g]; seen && prev >= rank {
			continue
		}
		best[g] = rank
		v := o.Gens[g]
		v.CA = pemFingerprint(ca)
		if _, ok := o.Gens[g]; ok {
			o.Gens[g] = v
		}
	}
	u, err := s.get(s.engineRef(engine))
	if err != nil {
		return o, err
	}
	if u != nil {
		o.Engine = readEngine(u)
	}
	o.Post.Status, o.Post.Published, err = s.readRolled(ctx, inst, xr)
	return o, err
}

func (s *scenario) engineRef(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(harness.EngineGVK)
	u.SetNamespace(s.ns)
	u.SetName(name)
	return u
}

// trustGate: whenever the routing Service selects a TLS generation, the
// CA of that generation's certificate is in what the instance publishes to
// its engines as trusted by every gateway pod (its <instance>-engines
// ConfigMap, read after the Service). The composite's
// status.rolledEngineTrustCAs is written from the same response a moment
// later (Crossplane applies composed objects before it writes the status),
// and is checked to catch up at the end.
func trustGate(o tlsObservation) (judged bool, violation string) {
	g, ok := o.Gens[o.Selector]
	if o.Selector < 0 || !ok || !g.TLS {
		return false, ""
	}
	switch {
	case g.CA == "":
		return true, fmt.Sprintf("the routing Service selects TLS generation %d, which no CA issued a certificate under", o.Selector)
	case slices.Contains(o.Post.Published.Trust, g.CA):
		return true, ""
	}
	return true, fmt.Sprintf("the routing Service selects TLS generation %d, whose CA %s the ConfigMap engines read does not list as trusted (status lists it: %v)",
		o.Selector, g.CA, slices.Contains(o.Post.Status.Trust, g.CA))
}

// upstreamServes: the Service the instance publishes to its engines as
// every gateway pod's route to engine (rolledEngineUpstream in its
// <instance>-engines ConfigMap) exists and selects a generation whose
// StatefulSet exists and serves the protocol the route names. It is read
// before the objects, and judged only when a second read after them finds
// it unchanged.
func upstreamServes(engine string) func(tlsObservation) (bool, string) {
	return func(o tlsObservation) (bool, string) {
		if !o.Pre.Published.equal(o.Post.Published) {
			return false, ""
		}
		return true, servedBy(o, o.Pre.Published.Up, engine)
	}
}

// servedBy says how o contradicts up's route to engine; "" when it does not.
func servedBy(o tlsObservation, up *upstreamView, engine string) string {
	svc, tls := up.route(engine)
	var gen int64
	switch svc {
	case engine + "-service":
		gen = o.Selector
	case engine + "-next":
		gen = o.Next
	default:
		return fmt.Sprintf("the rolled upstream reaches %s by Service %s, not one of its own", engine, svc)
	}
	g, ok := o.Gens[gen]
	switch {
	case gen < 0:
		return fmt.Sprintf("the rolled upstream reaches %s by Service %s (tls=%v), which does not exist or selects no generation", engine, svc, tls)
	case !ok || g.Terminating:
		return fmt.Sprintf("the rolled upstream reaches %s by Service %s (tls=%v), which selects generation %d, whose StatefulSet is gone or going", engine, svc, tls, gen)
	case g.TLS != tls:
		return fmt.Sprintf("the rolled upstream reaches %s by Service %s with tls=%v, which selects generation %d serving tls=%v", engine, svc, tls, gen, g.TLS)
	}
	return ""
}

// tlsRecorder observes an engine and its instance until stopped, keeping
// each observation that differs from the one before, and judging every
// observation with its check.
type tlsRecorder struct {
	mu         sync.Mutex
	obs        []tlsObservation
	looks      int
	judged     int
	failed     int
	violations []string
	// lagging counts the observations in which the composite's status
	// differed from the ConfigMap engines read.
	lagging int
	look    func(ctx context.Context)
	cancel  context.CancelFunc
	done    chan struct{}
}

// recordEngineTLS starts observing engine of instance inst (composite xr)
// every observeEvery. The scenario's cleanup stops it.
func (s *scenario) recordEngineTLS(engine, inst, xr string, check func(tlsObservation) (bool, string)) *tlsRecorder {
	ctx, cancel := context.WithCancel(s.ctx)
	r := &tlsRecorder{cancel: cancel, done: make(chan struct{})}
	start := time.Now()
	r.look = func(ctx context.Context) {
		o, err := s.observeEngineTLS(ctx, engine, inst, xr)
		o.At = time.Since(start)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.looks++
		if err != nil {
			r.failed++
			return
		}
		if n := len(r.obs); n == 0 || r.obs[n-1].key() != o.key() {
			r.obs = append(r.obs, o)
		}
		if !o.Pre.Status.equal(o.Pre.Published) || !o.Post.Status.equal(o.Post.Published) {
			r.lagging++
		}
		judged, violation := check(o)
		if judged {
			r.judged++
		}
		if violation != "" {
			r.violations = append(r.violations, fmt.Sprintf("%s\n    at %s", violation, o))
		}
	}
	go func() {
		defer close(r.done)
		for ctx.Err() == nil {
			r.look(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(observeEvery):
			}
		}
	}()
	s.t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// stop ends the recording, fails the test on any violation, logs what it
// saw and returns the distinct observations.
func (r *tlsRecorder) stop(t *testing.T) []tlsObservation {
	t.Helper()
	r.cancel()
	<-r.done
	// One last look, at the state the caller waited for.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.look(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	history := observations(r.obs)
	t.Logf("engine TLS recorder: %d looks (%d failed reads), %d judged, %d with the composite's status behind the ConfigMap engines read; %d distinct states:\n%s",
		r.looks, r.failed, r.judged, r.lagging, len(r.obs), history)
	if len(r.violations) > 0 {
		t.Errorf("%d observation(s) violated the invariant; the first:\n%s", len(r.violations), strings.Join(r.violations[:min(5, len(r.violations))], "\n"))
	}
	if r.judged == 0 {
		t.Error("the recorder judged no observation")
	}
	return slices.Clone(r.obs)
}

// podReleaser removes the hold label from the pods a selector matches, as
// they come, while it is not paused.
type podReleaser struct {
	paused atomic.Bool
}

func (p *podReleaser) pause()  { p.paused.Store(true) }
func (p *podReleaser) resume() { p.paused.Store(false) }

// autoRelease releases the held pods selector matches until the scenario
// ends, except while paused.
func (s *scenario) autoRelease(selector string) *podReleaser {
	p := &podReleaser{}
	ctx, cancel := context.WithCancel(s.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, harness.HoldLabel)
		for ctx.Err() == nil {
			if !p.paused.Load() {
				l, err := cp.Kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector + "," + harness.HoldLabel})
				if err == nil {
					for _, pod := range l.Items {
						_, _ = cp.Kube.CoreV1().Pods(s.ns).Patch(ctx, pod.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
	s.t.Cleanup(func() { cancel(); <-done })
	return p
}
