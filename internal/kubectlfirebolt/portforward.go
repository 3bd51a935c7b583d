package kubectlfirebolt

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// Ports the original forwards to: the gateway Service's client port, and
// the engine routing Service's query port.
const (
	gatewayPort = 80
	enginePort  = contract.EngineQueryPort
)

// bindTimeout is how long a port-forward may take to listen locally, as
// the original's; a variable only so a test can shorten it.
var bindTimeout = 15 * time.Second

// maxServicePods bounds the pods read to pick one behind a Service.
const maxServicePods = 2000

// Forwarder forwards a local port to a pod's port until ctx ends.
type Forwarder interface {
	// Forward listens on localhost:local (0 picks a free port), calls
	// ready with the port it listens on, and forwards every connection to
	// the pod's remote port until ctx ends or the stream breaks.
	Forward(ctx context.Context, namespace, pod string, local, remote int, ready func(local int)) error
}

// target is the pod and container port a Service port leads to.
type target struct {
	Pod  string
	Port int
}

// resolveService picks the pod a forward to service:port goes to, as
// kubectl port-forward svc/… does: a ready, running pod the Service
// selects (the first by name, so the choice is stable), and the container
// port the Service port targets, by number or by name.
func resolveService(ctx context.Context, core Core, ns, name string, port int32) (target, error) {
	svc, err := core.GetService(ctx, ns, name)
	if err != nil {
		return target{}, notFoundService(err, name, ns)
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			sp = &svc.Spec.Ports[i]
		}
	}
	if sp == nil {
		return target{}, errors.Errorf("service %q has no port %d", name, port)
	}
	if len(svc.Spec.Selector) == 0 {
		return target{}, errors.Errorf("service %q selects no pods (it has no selector)", name)
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector).String()
	pods, err := core.ListPods(ctx, ns, metav1.ListOptions{LabelSelector: sel, Limit: maxServicePods})
	if err != nil {
		return target{}, errors.Wrapf(err, "cannot list the pods of service %q", name)
	}
	var ready []*corev1.Pod
	for i := range pods.Items {
		if p := &pods.Items[i]; servesTraffic(p) {
			ready = append(ready, p)
		}
	}
	if len(ready) == 0 {
		return target{}, errors.Errorf("service %q has no ready pod (%d pod(s) match %s)", name, len(pods.Items), sel)
	}
	sort.Slice(ready, func(i, j int) bool { return ready[i].Name < ready[j].Name })
	pod := ready[0]
	p, err := containerPort(pod, sp.TargetPort, port)
	if err != nil {
		return target{}, errors.Wrapf(err, "service %q port %d", name, port)
	}
	return target{Pod: pod.Name, Port: p}, nil
}

func notFoundService(err error, name, ns string) error {
	if err == nil {
		return nil
	}
	return notFound(err, serviceResource, name, ns)
}

// servesTraffic: running, Ready and not being deleted.
func servesTraffic(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// containerPort is the pod's port a Service port's targetPort names: a
// number (0 or unset: the Service port itself), or a container port's name.
func containerPort(pod *corev1.Pod, tp intstr.IntOrString, port int32) (int, error) {
	if tp.Type == intstr.Int {
		if tp.IntVal == 0 {
			return int(port), nil
		}
		return int(tp.IntVal), nil
	}
	for _, c := range pod.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name == tp.StrVal {
				return int(cp.ContainerPort), nil
			}
		}
	}
	return 0, errors.Errorf("targets port %q, which no container of pod %q names", tp.StrVal, pod.Name)
}

// checkLocalPort refuses a --local-port no listener can take.
func checkLocalPort(p int) error {
	if p < 0 || p > 65535 {
		return errors.Errorf("--local-port %d: must be between 1 and 65535, or 0 to pick a free port", p)
	}
	return nil
}

// portForward forwards to service:port until the context ends, and prints
// where it listens once it does, with the scheme the service speaks ("" when
// it cannot be told, as while TLS is being switched on or off).
func portForward(e *Env, c Clients, service string, port int32, local int, scheme string) error {
	t, err := resolveService(e.Ctx, c.Core, c.Namespace, service, port)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	bound := make(chan int, 1)
	done := make(chan error, 1)
	go func() {
		done <- c.Forwarder.Forward(ctx, c.Namespace, t.Pod, local, t.Port, func(p int) { bound <- p })
	}()
	timer := time.NewTimer(bindTimeout)
	defer timer.Stop()
	select {
	case p := <-bound:
		if err := announce(e.Out, p, scheme); err != nil {
			return err
		}
		err = <-done
	case err = <-done:
		// A forward that bound and broke at once still bound.
		select {
		case p := <-bound:
			if err := announce(e.Out, p, scheme); err != nil {
				return err
			}
		default:
			return errors.Wrapf(err, "cannot forward to pod %q port %d", t.Pod, t.Port)
		}
	case <-timer.C:
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			return errors.Wrapf(err, "port-forward to pod %q did not listen locally within %s", t.Pod, bindTimeout)
		}
		return errors.Errorf("port-forward to pod %q did not listen locally within %s", t.Pod, bindTimeout)
	}
	if e.Ctx.Err() != nil {
		// Interrupted: the normal end of a port-forward.
		return nil
	}
	return errors.Wrapf(err, "port-forward to pod %q ended", t.Pod)
}

// announce prints where a port-forward listens.
func announce(w io.Writer, port int, scheme string) error {
	where := "localhost:" + strconv.Itoa(port)
	if scheme != "" {
		where = scheme + "://" + where
	}
	_, err := fmt.Fprintf(w, "Forwarding on %s\n", where)
	return err
}

// spdyForwarder is the real Forwarder: the pods/portforward subresource
// over SPDY, as kubectl port-forward.
type spdyForwarder struct {
	config *rest.Config
	core   Core
}

// Forward implements Forwarder.
func (f spdyForwarder) Forward(ctx context.Context, namespace, pod string, local, remote int, ready func(int)) error {
	rt, upgrader, err := spdy.RoundTripperFor(f.config)
	if err != nil {
		return errors.Wrap(err, "cannot make an SPDY transport")
	}
	url := f.core.RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, url)
	stop := make(chan struct{})
	readyCh := make(chan struct{})
	pf, err := portforward.NewOnAddresses(dialer, []string{"localhost"}, []string{fmt.Sprintf("%d:%d", local, remote)}, stop, readyCh, io.Discard, io.Discard)
	if err != nil {
		return errors.Wrap(err, "cannot set up the port-forward")
	}
	done := make(chan error, 1)
	go func() { done <- pf.ForwardPorts() }()
	go func() {
		<-ctx.Done()
		close(stop)
	}()
	select {
	case <-readyCh:
	case err := <-done:
		return err
	}
	ports, err := pf.GetPorts()
	if err == nil && len(ports) == 0 {
		err = errors.New("no port is forwarded")
	}
	if err != nil {
		pf.Close()
		if ferr := <-done; ferr != nil {
			return errors.Wrapf(err, "cannot read the local port (the forward ended: %v)", ferr)
		}
		return errors.Wrap(err, "cannot read the local port")
	}
	ready(int(ports[0].Local))
	return <-done
}

// gatewayScheme is the scheme the gateway's client listener speaks, by the
// original's rule: https once status.gatewayTLS records a TLS posture;
// unknown ("") while spec.tls.gateway is enabled and none is recorded yet;
// else http.
func gatewayScheme(i instanceClaim) string {
	switch {
	case i.Status.GatewayTLS != nil:
		return "https"
	case i.Spec.TLS != nil && i.Spec.TLS.Gateway != nil && i.Spec.TLS.Gateway.Enabled:
		return ""
	}
	return "http"
}

// engineScheme is the scheme an engine's query port speaks, by the
// original's rule: https while engine TLS is enabled and the gateway
// re-encrypts to engines; unknown ("") mid-transition (enabled but not
// re-encrypting yet, disabled while the status still records it, or the
// engine reached otherwise than by default during its own switch); else
// http.
func engineScheme(i instanceClaim, engine string) string {
	enabled := i.Spec.TLS != nil && i.Spec.TLS.Engine != nil && i.Spec.TLS.Engine.Enabled
	if up := i.Status.RolledEngineUpstream; up != nil {
		for _, r := range up.Routes {
			if r.Engine == engine {
				return ""
			}
		}
	}
	st := i.Status.EngineTLS
	switch {
	case enabled && st != nil && st.Reencrypting:
		return "https"
	case enabled || st != nil:
		return ""
	}
	return "http"
}
