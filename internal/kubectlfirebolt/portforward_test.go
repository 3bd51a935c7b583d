package kubectlfirebolt

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
)

// TestForwardedPorts: the ports are the ones the function's Services
// expose.
func TestForwardedPorts(t *testing.T) {
	if gatewayPort != instance.GatewayPort {
		t.Errorf("gatewayPort = %d, the gateway Service's port is %d", gatewayPort, instance.GatewayPort)
	}
}

func svc(name string, selector map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace},
		Spec:       corev1.ServiceSpec{Selector: selector, Ports: ports},
	}
}

// pod is a pod with labels, Running and Ready unless changed by mods.
func pod(name string, labels map[string]string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "envoy", Ports: []corev1.ContainerPort{
			{Name: "http", ContainerPort: 8080}, {Name: "admin", ContainerPort: 9901},
		}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func notReady(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }
func pending(p *corev1.Pod)  { p.Status.Phase = corev1.PodPending }
func deleting(p *corev1.Pod) {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	p.Finalizers = []string{"hold"}
}

// TestResolveService: the pod a Service port forwards to is the first
// ready, running, live pod it selects, by name; the port is the one the
// Service port targets, by number or by container port name.
func TestResolveService(t *testing.T) {
	gw := map[string]string{"app": "gw"}
	byName := corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("http")}
	cases := map[string]struct {
		objs    []runtime.Object
		want    target
		wantErr string
	}{
		"NamedTargetPort": {
			objs: []runtime.Object{svc("demo-gateway", gw, byName), pod("gw-b", gw), pod("gw-a", gw)},
			want: target{Pod: "gw-a", Port: 8080},
		},
		"NumberedTargetPort": {
			objs: []runtime.Object{svc("demo-gateway", gw, corev1.ServicePort{Port: 80, TargetPort: intstr.FromInt32(10000)}), pod("gw-a", gw)},
			want: target{Pod: "gw-a", Port: 10000},
		},
		"NoTargetPortIsThePort": {
			objs: []runtime.Object{svc("demo-gateway", gw, corev1.ServicePort{Port: 80}), pod("gw-a", gw)},
			want: target{Pod: "gw-a", Port: 80},
		},
		"SkipsPodsNotServing": {
			objs: []runtime.Object{
				svc("demo-gateway", gw, byName),
				pod("gw-a", gw, notReady), pod("gw-b", gw, pending), pod("gw-c", gw, deleting), pod("gw-d", gw),
				pod("other", map[string]string{"app": "other"}),
			},
			want: target{Pod: "gw-d", Port: 8080},
		},
		"OtherPortsOfTheService": {
			objs: []runtime.Object{svc("demo-gateway", gw, corev1.ServicePort{Port: 9901, TargetPort: intstr.FromString("admin")}, byName), pod("gw-a", gw)},
			want: target{Pod: "gw-a", Port: 8080},
		},
		"NoService": {
			wantErr: `service "demo-gateway" not found in namespace "firebolt"`,
		},
		"NoSuchPort": {
			objs:    []runtime.Object{svc("demo-gateway", gw, corev1.ServicePort{Port: 8443}), pod("gw-a", gw)},
			wantErr: `service "demo-gateway" has no port 80`,
		},
		"NoSelector": {
			objs:    []runtime.Object{svc("demo-gateway", nil, byName)},
			wantErr: `service "demo-gateway" selects no pods (it has no selector)`,
		},
		"NoReadyPod": {
			objs:    []runtime.Object{svc("demo-gateway", gw, byName), pod("gw-a", gw, notReady), pod("gw-b", gw, pending)},
			wantErr: `service "demo-gateway" has no ready pod (2 pod(s) match app=gw)`,
		},
		"UnknownPortName": {
			objs:    []runtime.Object{svc("demo-gateway", gw, corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("query")}), pod("gw-a", gw)},
			wantErr: `service "demo-gateway" port 80: targets port "query", which no container of pod "gw-a" names`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := resolveService(t.Context(), fakeCore{kubefake.NewClientset(tc.objs...)}, testNamespace, "demo-gateway", 80)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestSchemes: the scheme printed for the gateway and for an engine,
// by the original's rules.
func TestSchemes(t *testing.T) {
	on := &v1alpha1.TLSListenerSpec{Enabled: true}
	off := &v1alpha1.TLSListenerSpec{}
	inst := func(spec *v1alpha1.TLSSpec, gw *v1alpha1.GatewayTLSStatus, eng *v1alpha1.EngineTLSStatus, routes ...v1alpha1.EngineRoute) instanceClaim {
		var i instanceClaim
		i.Spec.TLS = spec
		i.Status.GatewayTLS = gw
		i.Status.EngineTLS = eng
		if routes != nil {
			i.Status.RolledEngineUpstream = &v1alpha1.EngineUpstreamStatus{Routes: routes}
		}
		return i
	}
	cases := map[string]struct {
		i               instanceClaim
		gateway, engine string
	}{
		"PlainHTTP":                 {i: inst(nil, nil, nil), gateway: "http", engine: "http"},
		"BothDisabled":              {i: inst(&v1alpha1.TLSSpec{Gateway: off, Engine: off}, nil, nil), gateway: "http", engine: "http"},
		"GatewayTLSRecorded":        {i: inst(&v1alpha1.TLSSpec{Gateway: on}, &v1alpha1.GatewayTLSStatus{SecretName: "s"}, nil), gateway: "https", engine: "http"},
		"GatewayTLSNotRecordedYet":  {i: inst(&v1alpha1.TLSSpec{Gateway: on}, nil, nil), gateway: "", engine: "http"},
		"GatewayTLSStillRecorded":   {i: inst(&v1alpha1.TLSSpec{Gateway: off}, &v1alpha1.GatewayTLSStatus{SecretName: "s"}, nil), gateway: "https", engine: "http"},
		"EngineTLSReencrypting":     {i: inst(&v1alpha1.TLSSpec{Engine: on}, nil, &v1alpha1.EngineTLSStatus{SecretName: "a", Reencrypting: true}), gateway: "http", engine: "https"},
		"EngineTLSNotReencrypting":  {i: inst(&v1alpha1.TLSSpec{Engine: on}, nil, &v1alpha1.EngineTLSStatus{SecretName: "a"}), gateway: "http", engine: ""},
		"EngineTLSNoStatusYet":      {i: inst(&v1alpha1.TLSSpec{Engine: on}, nil, nil), gateway: "http", engine: ""},
		"EngineTLSDisabledInStatus": {i: inst(&v1alpha1.TLSSpec{Engine: off}, nil, &v1alpha1.EngineTLSStatus{SecretName: "a", Reencrypting: true}), gateway: "http", engine: ""},
		"EngineSwitching": {
			i:       inst(&v1alpha1.TLSSpec{Engine: on}, nil, &v1alpha1.EngineTLSStatus{SecretName: "a", Reencrypting: true}, v1alpha1.EngineRoute{Engine: "demo", Service: "demo-next", TLS: true}),
			gateway: "http", engine: "",
		},
		"OtherEngineSwitching": {
			i:       inst(&v1alpha1.TLSSpec{Engine: on}, nil, &v1alpha1.EngineTLSStatus{SecretName: "a", Reencrypting: true}, v1alpha1.EngineRoute{Engine: "other", Service: "other-next"}),
			gateway: "http", engine: "https",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := gatewayScheme(tc.i); got != tc.gateway {
				t.Errorf("gateway scheme %q, want %q", got, tc.gateway)
			}
			if got := engineScheme(tc.i, "demo"); got != tc.engine {
				t.Errorf("engine scheme %q, want %q", got, tc.engine)
			}
		})
	}
}

// fakeForwarder records what it was asked to forward, reports local as
// bound (unless it must fail or hang) and then runs then.
type fakeForwarder struct {
	mu    sync.Mutex
	calls []forwardCall
	local int
	fail  error
	hang  bool
	then  func()
}

type forwardCall struct {
	Namespace, Pod string
	Local, Remote  int
}

func (f *fakeForwarder) Forward(ctx context.Context, ns, pod string, local, remote int, ready func(int)) error {
	f.mu.Lock()
	f.calls = append(f.calls, forwardCall{ns, pod, local, remote})
	f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	if !f.hang {
		p := local
		if p == 0 {
			p = f.local
		}
		ready(p)
		if f.then != nil {
			f.then()
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestPortForward runs both port-forward commands against a fake
// forwarder that binds and is then interrupted, as a person's ^C would.
func TestPortForward(t *testing.T) {
	gwLabels := map[string]string{"firebolt.io/instance": "demo", "firebolt.io/component": "gateway"}
	engLabels := map[string]string{"firebolt.io/engine": "analytics", "firebolt.io/generation": "1"}
	core := make([]runtime.Object, 0, 10)
	core = append(core,
		svc("demo-gateway", gwLabels, corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("http")}),
		pod("demo-gateway-7d9-abcde", gwLabels),
		svc("analytics-service", engLabels, corev1.ServicePort{Port: 3473, TargetPort: intstr.FromInt32(3473)}),
		pod("analytics-g1-0", engLabels),
	)
	tlsInstance := obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltInstance
metadata: {name: secure, namespace: firebolt}
spec: {metadata: {}, gateway: {}, tls: {gateway: {enabled: true}, engine: {enabled: true}}}
status:
  gatewayTLS: {secretName: secure-gateway-tls}
  engineTLS: {secretName: secure-engine-tls-anchor, reencrypting: true}
`)
	secureEngine := obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: vault, namespace: firebolt}
spec: {instanceRef: secure, replicas: 1}
`)
	orphan := obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: orphan, namespace: firebolt}
spec: {instanceRef: gone, replicas: 1}
`)
	vaultLabels := map[string]string{"firebolt.io/engine": "vault", "firebolt.io/generation": "0"}
	orphanLabels := map[string]string{"firebolt.io/engine": "orphan", "firebolt.io/generation": "0"}
	core = append(core,
		svc("secure-gateway", gwLabels, corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("http")}),
		svc("vault-service", vaultLabels, corev1.ServicePort{Port: 3473}), pod("vault-g0-0", vaultLabels),
		svc("orphan-service", orphanLabels, corev1.ServicePort{Port: 3473}), pod("orphan-g0-0", orphanLabels),
	)

	cases := map[string]struct {
		args      []string
		forwarder *fakeForwarder
		want      result
		calls     []forwardCall
	}{
		"Instance": {
			args:      []string{"instance", "port-forward", "demo"},
			forwarder: &fakeForwarder{local: 41234},
			want:      result{Stdout: "Forwarding on http://localhost:41234\n"},
			calls:     []forwardCall{{"firebolt", "demo-gateway-7d9-abcde", 0, 8080}},
		},
		"InstanceLocalPort": {
			args:  []string{"instance", "port-forward", "demo", "--local-port", "8123"},
			want:  result{Stdout: "Forwarding on http://localhost:8123\n"},
			calls: []forwardCall{{"firebolt", "demo-gateway-7d9-abcde", 8123, 8080}},
		},
		"InstanceGatewayTLS": {
			args:      []string{"instance", "port-forward", "secure"},
			forwarder: &fakeForwarder{local: 41234},
			want:      result{Stdout: "Forwarding on https://localhost:41234\n"},
			calls:     []forwardCall{{"firebolt", "demo-gateway-7d9-abcde", 0, 8080}},
		},
		"Engine": {
			args:      []string{"engine", "port-forward", "analytics"},
			forwarder: &fakeForwarder{local: 45555},
			want:      result{Stdout: "Forwarding on http://localhost:45555\n"},
			calls:     []forwardCall{{"firebolt", "analytics-g1-0", 0, 3473}},
		},
		"EngineTLS": {
			args:  []string{"engine", "port-forward", "vault", "--local-port", "3473"},
			want:  result{Stdout: "Forwarding on https://localhost:3473\n"},
			calls: []forwardCall{{"firebolt", "vault-g0-0", 3473, 3473}},
		},
		"EngineWithoutInstanceWarns": {
			args:      []string{"engine", "port-forward", "orphan"},
			forwarder: &fakeForwarder{local: 40000},
			want: result{Stdout: "Forwarding on localhost:40000\n",
				Stderr: "warning: the scheme is not known (fireboltinstance \"gone\" not found in namespace \"firebolt\"): the engine speaks https when its instance has engine TLS on\n"},
			calls: []forwardCall{{"firebolt", "orphan-g0-0", 0, 3473}},
		},
		"InstanceNotFound": {
			args: []string{"instance", "port-forward", "nope"},
			want: result{Code: 1, Stderr: "error: fireboltinstance \"nope\" not found in namespace \"firebolt\"\n"},
		},
		"EngineNotFound": {
			args: []string{"engine", "port-forward", "nope"},
			want: result{Code: 1, Stderr: "error: fireboltengine \"nope\" not found in namespace \"firebolt\"\n"},
		},
		"NoGatewayService": {
			args: []string{"instance", "port-forward", "staging"},
			want: result{Code: 1, Stderr: "error: service \"staging-gateway\" not found in namespace \"firebolt\"\n"},
		},
		"LocalPortOutOfRange": {
			args: []string{"engine", "port-forward", "analytics", "--local-port", "70000"},
			want: result{Code: 1, Stderr: "error: --local-port 70000: must be between 1 and 65535, or 0 to pick a free port\n"},
		},
		"ForwardFails": {
			args:      []string{"engine", "port-forward", "analytics"},
			forwarder: &fakeForwarder{fail: errors.New("upgrade request required")},
			want:      result{Code: 1, Stderr: "error: cannot forward to pod \"analytics-g1-0\" port 3473: upgrade request required\n"},
			calls:     []forwardCall{{"firebolt", "analytics-g1-0", 0, 3473}},
		},
		"NoOutputFormats": {
			args: []string{"engine", "port-forward", "analytics", "-o", "json"},
			want: result{Code: 1, Stderr: "error: -o json: engine port-forward prints table only\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeCluster(t, append(append(instances(t), engines(t)...), tlsInstance, secureEngine, orphan), core...)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			fw := tc.forwarder
			if fw == nil {
				fw = &fakeForwarder{}
			}
			fw.then = cancel
			f.forwarder = fw
			got := f.runCtx(ctx, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kubectl firebolt %v (-want +got):\n%s", tc.args, diff)
			}
			if diff := cmp.Diff(tc.calls, fw.calls); diff != "" {
				t.Errorf("forwards (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPortForwardBindTimeout: a forward that never listens ends with an
// error after the bind timeout.
func TestPortForwardBindTimeout(t *testing.T) {
	old := bindTimeout
	bindTimeout = 10 * time.Millisecond
	t.Cleanup(func() { bindTimeout = old })
	gw := map[string]string{"app": "gw"}
	f := newFakeCluster(t, instances(t), svc("demo-gateway", gw, corev1.ServicePort{Port: 80}), pod("gw-a", gw))
	f.forwarder = &fakeForwarder{hang: true}
	got := f.run(t, "instance", "port-forward", "demo")
	want := result{Code: 1, Stderr: "error: port-forward to pod \"gw-a\" did not listen locally within 10ms\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
