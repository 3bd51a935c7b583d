package harness

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// MetricsPort is the engine pods' metrics port the drain check scrapes.
const MetricsPort = 9090

// Mode is how a fake engine pod answers a scrape.
type Mode string

// Modes of a fake engine pod.
const (
	// Idle reports no running or suspended queries: drained.
	Idle Mode = "idle"
	// Busy reports the Behaviour's query counts.
	Busy Mode = "busy"
	// Failing answers 500.
	Failing Mode = "failing"
	// Hanging accepts the request and never answers.
	Hanging Mode = "hanging"
	// Down has no listener at all: connections are refused.
	Down Mode = "down"
)

// Behaviour is what a fake engine pod reports.
type Behaviour struct {
	Mode      Mode
	Running   int
	Suspended int
}

// FakePods stands in for the engine processes: one HTTP server per pod IP,
// bound to that IP on MetricsPort inside the network namespace, serving
// firebolt_running_queries and firebolt_suspended_queries as Prometheus
// text. KWOK gives the pods their IPs; the API server's pods/proxy reaches
// these servers exactly as it would reach a real pod. Every pod is Idle
// unless a rule says otherwise.
type FakePods struct {
	c     *Cluster
	podsL corelisters.PodLister
	nodes corelisters.NodeLister

	mu      sync.Mutex
	rules   map[string]Behaviour // "namespace/pod-name-prefix"
	pods    map[string]podRef    // pod IP -> pod
	servers map[string]*http.Server
	hits    map[string]int // "namespace/pod" -> scrapes answered
	stop    chan struct{}

	// Premises every scenario relies on, checked on every sync: each live
	// pod IP belongs to one pod (the servers key on IP, so a shared IP would
	// answer for the wrong pod), and the node stays Ready (else pods leave
	// phase Running and a drain check skips them).
	anomalies []Anomaly
	dupes     map[string]bool // IPs already reported
	nodeDown  bool
}

// Anomaly is a broken premise of the fakes, seen at one time: the scenarios
// it names (an empty Namespaces means all) cannot trust what the pods
// answered and fail.
type Anomaly struct {
	At         time.Time
	Namespaces []string
	What       string
}

type podRef struct{ Namespace, Name string }

func newFakePods(c *Cluster, pods corelisters.PodLister, nodes corelisters.NodeLister) *FakePods {
	return &FakePods{c: c, podsL: pods, nodes: nodes, rules: map[string]Behaviour{}, pods: map[string]podRef{}, servers: map[string]*http.Server{},
		hits: map[string]int{}, stop: make(chan struct{}), dupes: map[string]bool{}}
}

// Set makes every pod in namespace whose name starts with prefix behave as
// b, e.g. Set("ns", "demo-g1-", Behaviour{Mode: Busy, Running: 3}). The
// longest matching prefix wins.
func (f *FakePods) Set(namespace, prefix string, b Behaviour) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules[namespace+"/"+prefix] = b
}

// Scrapes returns how many scrapes of a pod the fakes have received, hung
// and failed ones included.
func (f *FakePods) Scrapes(namespace, pod string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[namespace+"/"+pod]
}

// ScrapesWithPrefix sums Scrapes over the pods whose names start with prefix.
func (f *FakePods) ScrapesWithPrefix(namespace, prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for k, v := range f.hits {
		if strings.HasPrefix(k, namespace+"/"+prefix) {
			n += v
		}
	}
	return n
}

func (f *FakePods) behaviour(p podRef) Behaviour {
	best, b := -1, Behaviour{Mode: Idle}
	for k, r := range f.rules {
		ns, prefix, _ := strings.Cut(k, "/")
		if ns == p.Namespace && strings.HasPrefix(p.Name, prefix) && len(prefix) > best {
			best, b = len(prefix), r
		}
	}
	return b
}

// run keeps one server per pod IP until ctx ends.
func (f *FakePods) run(ctx context.Context) {
	defer func() {
		close(f.stop)
		f.mu.Lock()
		defer f.mu.Unlock()
		for ip, s := range f.servers {
			_ = s.Close()
			delete(f.servers, ip)
		}
	}()
	// From the informer's cache: a rule set meanwhile takes effect on the
	// next pass, a new pod IP as soon as its watch event arrived.
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if l, err := f.podsL.List(labels.Everything()); err == nil {
			f.sync(ctx, l)
		}
		if n, err := f.nodes.Get(NodeName); err == nil {
			f.checkNode(n)
		}
	}, 300*time.Millisecond)
}

// Anomalies returns what broke the fakes' premises for namespace since
// since: pod IPs shared with another pod, and the node leaving Ready.
func (f *FakePods) Anomalies(namespace string, since time.Time) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, a := range f.anomalies {
		if a.At.Before(since) {
			continue
		}
		if len(a.Namespaces) == 0 || slices.Contains(a.Namespaces, namespace) {
			out = append(out, a.At.Format(time.RFC3339Nano)+" "+a.What)
		}
	}
	return out
}

func (f *FakePods) checkNode(n *corev1.Node) {
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !ready && !f.nodeDown {
		a := Anomaly{At: time.Now(), What: fmt.Sprintf("node %s is not Ready: its pods may leave phase Running", NodeName)}
		f.anomalies = append(f.anomalies, a)
		f.c.logf("fake pods: %s", a.What)
	}
	f.nodeDown = !ready
}

func (f *FakePods) sync(ctx context.Context, pods []*corev1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods = map[string]podRef{}
	shared := map[string][]podRef{}
	for _, p := range pods {
		if ip := net.ParseIP(p.Status.PodIP); ip != nil && podNet.Contains(ip) && !p.Spec.HostNetwork {
			ref := podRef{Namespace: p.Namespace, Name: p.Name}
			shared[p.Status.PodIP] = append(shared[p.Status.PodIP], ref)
			f.pods[p.Status.PodIP] = ref
		}
	}
	// A shared IP is never served: its answer could be another pod's.
	for ip, refs := range shared {
		if len(refs) < 2 {
			continue
		}
		delete(f.pods, ip)
		if f.dupes[ip] {
			continue
		}
		f.dupes[ip] = true
		a := Anomaly{At: time.Now(), What: fmt.Sprintf("pod IP %s is held by %d live pods: %v", ip, len(refs), refs)}
		for _, r := range refs {
			a.Namespaces = append(a.Namespaces, r.Namespace)
		}
		f.anomalies = append(f.anomalies, a)
		f.c.logf("fake pods: %s", a.What)
	}
	for ip, s := range f.servers {
		p, ok := f.pods[ip]
		if !ok || f.behaviour(p).Mode == Down {
			_ = s.Close()
			delete(f.servers, ip)
		}
	}
	for ip, p := range f.pods {
		if _, ok := f.servers[ip]; ok || f.behaviour(p).Mode == Down {
			continue
		}
		l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", net.JoinHostPort(ip, fmt.Sprint(MetricsPort)))
		if err != nil {
			f.c.logf("fake pods: cannot listen on %s: %v", ip, err)
			continue
		}
		s := &http.Server{Handler: f.handler(ip), ReadHeaderTimeout: 10 * time.Second}
		f.servers[ip] = s
		go func() { _ = s.Serve(l) }()
	}
}

func (f *FakePods) handler(ip string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		p, ok := f.pods[ip]
		b := f.behaviour(p)
		if ok {
			f.hits[p.Namespace+"/"+p.Name]++
		}
		f.mu.Unlock()
		if !ok || r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		switch b.Mode {
		case Failing:
			http.Error(w, "fake engine: metrics failing", http.StatusInternalServerError)
			return
		case Hanging:
			select {
			case <-r.Context().Done():
			case <-f.stop:
			}
			return
		case Idle:
			b.Running, b.Suspended = 0, 0
		case Busy:
			// Serves the Behaviour's own counts.
		case Down:
			// Never reached: sync opens no listener for a pod that is down.
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = fmt.Fprintf(w, "# HELP firebolt_running_queries Queries currently executing.\n# TYPE firebolt_running_queries gauge\nfirebolt_running_queries %d\n", b.Running)
		_, _ = fmt.Fprintf(w, "# HELP firebolt_suspended_queries Queries idle-waiting on a client.\n# TYPE firebolt_suspended_queries gauge\nfirebolt_suspended_queries %d\n", b.Suspended)
	})
}

// Describe lists the current rules and scrape counts, for failure output.
func (f *FakePods) Describe(namespace string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var lines []string
	for k, r := range f.rules {
		if strings.HasPrefix(k, namespace+"/") {
			lines = append(lines, fmt.Sprintf("rule %s*: %+v", k, r))
		}
	}
	for k, n := range f.hits {
		if strings.HasPrefix(k, namespace+"/") {
			lines = append(lines, fmt.Sprintf("scrapes of %s: %d", k, n))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
