package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// partitionLog is every partition a StatefulSet's spec was given while it
// was watched, in order, repeats folded. It is read from a watch of the API
// server, which delivers every change of the object in order. The claim's
// events cannot serve: Kubernetes events are best effort, and Crossplane's
// recorder drops them when its queue is full or its spam filter throttles
// the claim (client-go `tools/record`), which a loaded CI run has shown.
type partitionLog struct {
	mu     sync.Mutex
	seen   []int32
	err    error
	cancel context.CancelFunc
	done   chan struct{}
}

// watchPartitions starts recording the partitions of StatefulSet name; the
// scenario's cleanup stops it.
func (s *scenario) watchPartitions(name string) *partitionLog {
	s.t.Helper()
	sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(s.ctx, name, metav1.GetOptions{})
	s.must(err)
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.FieldSelector = "metadata.name=" + name
		return cp.Kube.AppsV1().StatefulSets(s.ns).Watch(ctx, o)
	}}
	ctx, cancel := context.WithCancel(s.ctx)
	w, err := watchtools.NewRetryWatcherWithContext(ctx, sts.ResourceVersion, lw)
	if err != nil {
		cancel()
		s.must(err)
	}
	l := &partitionLog{cancel: cancel, done: make(chan struct{})}
	l.add(sts)
	go func() {
		defer close(l.done)
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					l.fail(fmt.Errorf("the watch of StatefulSet %s ended", name))
					return
				}
				switch o := ev.Object.(type) {
				case *appsv1.StatefulSet:
					l.add(o)
				default:
					l.fail(fmt.Errorf("the watch of StatefulSet %s sent %s %T", name, ev.Type, ev.Object))
					return
				}
			}
		}
	}()
	s.t.Cleanup(l.stop)
	return l
}

func (l *partitionLog) add(sts *appsv1.StatefulSet) {
	p := int32(-1) // no partition: every pod may roll
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		p = *ru.Partition
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.seen); n == 0 || l.seen[n-1] != p {
		l.seen = append(l.seen, p)
	}
}

func (l *partitionLog) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = err
}

func (l *partitionLog) stop() {
	l.cancel()
	<-l.done
}

// read is the partitions seen so far, and the watch's failure if it failed.
func (l *partitionLog) read() ([]int32, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen), l.err
}

// stepEvent reads the partition a PhasedRolloutStepDone event says it
// lowered to.
var stepEvent = regexp.MustCompile(`partition lowered to (\d+)`)

// checkOnePodAtATime checks a finished three-pod rollout: the StatefulSet
// was given partitions 3, 2, 1, 0 and then 3 again at rest, one pod let go
// at a time, highest ordinal first, and the claim was given one
// PhasedRolloutStepDone event per pod let go, naming its partition.
//
// The events are read where Crossplane's recorder was handed them (its
// debug log), not from the API server: client-go's recorder drops an
// object's events beyond a burst of 25 of a type, then lets one more
// through every five minutes (tools/record events_cache.go,
// defaultSpamBurst and defaultSpamQPS), and drops every event while its
// queue of 1000 is full. In a CI run none of an in-place engine claim's
// three step events reached the API server while Crossplane's log shows
// its recorder was handed them (and 29 "Composite resource is not yet
// ready" among the claim's 41 Normal events). Those the API server did
// store must name the same partitions.
func (s *scenario) checkOnePodAtATime(l *partitionLog, kind, claim string) {
	s.t.Helper()
	want := []int32{3, 2, 1, 0, 3}
	var seen []int32
	s.wait(30*time.Second, "the StatefulSet's partitions 3, 2, 1, 0, 3", func(context.Context) (bool, string, error) {
		var err error
		seen, err = l.read()
		if err != nil {
			return false, "", err
		}
		return len(seen) >= len(want), fmt.Sprint(seen), nil
	})
	if !slices.Equal(seen, want) {
		s.t.Errorf("the StatefulSet was given partitions %v, want %v: one pod at a time, highest ordinal first", seen, want)
	}
	var recorded []int
	s.wait(30*time.Second, "Crossplane to record a PhasedRolloutStepDone event on the claim for partitions 2, 1 and 0", func(context.Context) (bool, string, error) {
		var err error
		recorded, err = s.recordedSteps(kind, claim)
		if err != nil {
			return false, "", err
		}
		return len(recorded) >= 3, fmt.Sprint(recorded), nil
	})
	if !slices.Equal(recorded, []int{2, 1, 0}) {
		s.t.Errorf("Crossplane recorded step events on the claim lowering the partition to %v, want [2 1 0]: each pod let go once", recorded)
	}
	evs, err := cp.Kube.CoreV1().Events(s.ns).List(s.ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=" + kind + ",involvedObject.name=" + claim + ",reason=PhasedRolloutStepDone"})
	s.must(err)
	for _, e := range evs.Items {
		m := stepEvent.FindStringSubmatch(e.Message)
		if m == nil {
			s.t.Errorf("step event %q names no partition", e.Message)
			continue
		}
		if p, _ := strconv.Atoi(m[1]); !slices.Contains(recorded, p) || e.Count != 1 {
			s.t.Errorf("the API server stored a step event lowering the partition to %d (count %d), which Crossplane's recorder did not record once", p, e.Count)
		}
	}
}

// recordedSteps is the partitions of the PhasedRolloutStepDone events
// Crossplane's recorder was handed for claim, in order, from its debug
// log.
func (s *scenario) recordedSteps(kind, claim string) ([]int, error) {
	object := fmt.Sprintf(`"kind":%q,"namespace":%q,"name":%q`, kind, s.ns, claim)
	lines := cp.Process("crossplane").LogLines(0, 10000, func(l string) bool {
		return strings.Contains(l, "\tcrossplane.events\t") && strings.Contains(l, `"reason": "PhasedRolloutStepDone"`) && strings.Contains(l, object)
	})
	var steps []int
	for _, l := range strings.Split(lines, "\n") {
		if l == "" {
			continue
		}
		m := stepEvent.FindStringSubmatch(l)
		if m == nil {
			return nil, fmt.Errorf("a recorded step event names no partition: %s", l)
		}
		p, _ := strconv.Atoi(m[1])
		steps = append(steps, p)
	}
	return steps, nil
}
