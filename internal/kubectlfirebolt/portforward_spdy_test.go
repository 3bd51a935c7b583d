package kubectlfirebolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubelet/pkg/cri/streaming/portforward"
)

// syncBuffer is a bytes.Buffer a running command writes while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// podBackend is where the kubelet's side of the forward connects: the
// pod's port, here a loopback server that names what it stands for.
type podBackend struct {
	addr string
	mu   sync.Mutex
	// asked are the pods and ports the kubelet was asked to forward to.
	asked []string
}

func (b *podBackend) PortForward(ctx context.Context, name string, _ types.UID, port int32, stream io.ReadWriteCloser) error {
	b.mu.Lock()
	b.asked = append(b.asked, fmt.Sprintf("%s:%d", name, port))
	b.mu.Unlock()
	defer stream.Close()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", b.addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(conn, stream); done <- struct{}{} }()
	go func() { _, _ = io.Copy(stream, conn); done <- struct{}{} }()
	<-done
	return nil
}

// TestPortForwardOverSPDY: engine port-forward through the real clients:
// client-go's SPDY dialer against the kubelet's own port-forward server
// (the code a real kubelet runs behind the API server's pods/portforward),
// to the pod the routing Service selects, until interrupted. A request
// sent to the local port is answered by the pod.
func TestPortForwardOverSPDY(t *testing.T) {
	engineSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "engine analytics-g1-0 serving")
	}))
	defer engineSrv.Close()
	backend := &podBackend{addr: engineSrv.Listener.Addr().String()}

	engLabels := map[string]string{"firebolt.io/engine": "analytics", "firebolt.io/generation": "1"}
	service := svc("analytics-service", engLabels, corev1.ServicePort{Port: 3473, TargetPort: intstr.FromInt32(3473)})
	service.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}
	p := pod("analytics-g1-0", engLabels)
	pods := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: []corev1.Pod{*p}}
	objects := map[string]any{
		"/apis/compute.firebolt.io/v1alpha1/namespaces/firebolt/fireboltengines/analytics": json.RawMessage(`{"apiVersion":"compute.firebolt.io/v1alpha1","kind":"FireboltEngine",` +
			`"metadata":{"name":"analytics","namespace":"firebolt"},"spec":{"instanceRef":"demo","replicas":1}}`),
		"/apis/compute.firebolt.io/v1alpha1/namespaces/firebolt/fireboltinstances/demo": json.RawMessage(`{"apiVersion":"compute.firebolt.io/v1alpha1","kind":"FireboltInstance",` +
			`"metadata":{"name":"demo","namespace":"firebolt"},"spec":{"metadata":{},"gateway":{}}}`),
		"/api/v1/namespaces/firebolt/services/analytics-service": service,
		"/api/v1/namespaces/firebolt/pods":                       pods,
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/namespaces/firebolt/pods/analytics-g1-0/portforward" {
			portforward.ServePortForward(w, r, backend, "analytics-g1-0", "uid", nil, time.Minute, 10*time.Second, portforward.SupportedProtocols)
			return
		}
		o, ok := objects[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(o)
	}))
	defer api.Close()

	kubeconfig := kubeconfigFor(t, api.URL)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out, errOut syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- Run(ctx, []string{"engine", "port-forward", "analytics", "--kubeconfig", kubeconfig}, &out, &errOut, NewClients)
	}()

	forwarding := regexp.MustCompile(`^Forwarding on http://localhost:(\d+)\n$`)
	var port string
	for deadline := time.Now().Add(20 * time.Second); port == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := forwarding.FindStringSubmatch(out.String()); m != nil {
			port = m[1]
		}
		select {
		case c := <-code:
			t.Fatalf("port-forward ended with %d before listening: %s%s", c, out.String(), errOut.String())
		default:
		}
	}
	if port == "" {
		t.Fatalf("no Forwarding line within 20s: %q %q", out.String(), errOut.String())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://localhost:"+port+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET through the forward: %v", err)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	_ = resp.Body.Close()
	if err != nil || string(body) != "engine analytics-g1-0 serving" {
		t.Errorf("through the forward: %q, %v", body, err)
	}

	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("interrupted port-forward exited %d: %s", c, errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("port-forward did not end within 20s of the interrupt")
	}
	backend.mu.Lock()
	defer backend.mu.Unlock()
	if len(backend.asked) == 0 || backend.asked[0] != "analytics-g1-0:3473" {
		t.Errorf("the kubelet was asked for %v, want analytics-g1-0:3473", backend.asked)
	}
}
