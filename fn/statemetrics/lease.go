package statemetrics

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
)

// Lease timing. The holder writes the Lease once every RetryPeriod (client-go
// renews optimistically, one update and no read), so at rest it costs 60 s /
// RetryPeriod writes a minute, 4 with these values, and a standby reads it
// about as often. In exchange, a holder that dies without releasing leaves
// the state series absent for up to LeaseDuration plus a RetryPeriod
// before the standby takes over; one stopped cleanly releases the Lease
// and the standby follows within a RetryPeriod. Shorter periods shorten
// that gap and raise the idle request rate proportionally.
const (
	LeaseDuration = 60 * time.Second
	RenewDeadline = 40 * time.Second
	RetryPeriod   = 15 * time.Second
)

// DefaultLeaseName is the Lease the function's --state-metrics-lease names
// by default, and deploy/function-runtime.yaml lets it write.
const DefaultLeaseName = "function-firebolt-state-metrics"

// Lease elects the one function process that exports the state series.
type Lease struct {
	Client    coordinationv1client.LeasesGetter
	Namespace string
	Name      string
	// Identity must differ between processes.
	Identity string
	// Timing; zero takes the constants above.
	Duration, RenewDeadline, RetryPeriod time.Duration
	Log                                  logging.Logger
}

// Run campaigns for the Lease until ctx is done, telling lead whenever this
// process starts or stops holding it. On return the Lease is released (if
// this process held it) and lead was last told false.
func (l Lease) Run(ctx context.Context, lead func(bool)) error {
	if l.Namespace == "" || l.Name == "" || l.Identity == "" {
		return errors.New("the state metrics Lease needs a namespace, a name and an identity")
	}
	if l.Log == nil {
		l.Log = logging.NewNopLogger()
	}
	t := &terms{lead: func(leading bool) {
		if leading {
			l.Log.Info("Exporting the state metrics: this process holds the Lease", "lease", l.Namespace+"/"+l.Name, "identity", l.Identity)
		} else {
			l.Log.Info("Not exporting the state metrics: this process no longer holds the Lease", "lease", l.Namespace+"/"+l.Name, "identity", l.Identity)
		}
		lead(leading)
	}}
	defer t.end()
	for ctx.Err() == nil {
		term := t.next()
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: &resourcelock.LeaseLock{
				LeaseMeta:  metav1.ObjectMeta{Namespace: l.Namespace, Name: l.Name},
				Client:     l.Client,
				LockConfig: resourcelock.ResourceLockConfig{Identity: l.Identity},
			},
			LeaseDuration:   or(l.Duration, LeaseDuration),
			RenewDeadline:   or(l.RenewDeadline, RenewDeadline),
			RetryPeriod:     or(l.RetryPeriod, RetryPeriod),
			ReleaseOnCancel: true,
			Name:            l.Name,
			Callbacks: leaderelection.LeaderCallbacks{
				// client-go calls this in a goroutine of its own, which may
				// run late: it holds the flag for its term only, until the
				// term's context ends.
				OnStartedLeading: func(ctx context.Context) {
					t.set(term, true)
					<-ctx.Done()
					t.set(term, false)
				},
				OnStoppedLeading: func() { t.set(term, false) },
			},
		})
		if err != nil {
			return errors.Wrap(err, "cannot elect the state metrics exporter")
		}
		le.Run(ctx)
		t.set(term, false)
	}
	return nil
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// terms numbers the elections one process runs in turn, so that a callback
// of an ended term cannot change what a later term decided.
type terms struct {
	lead func(bool)

	mu      sync.Mutex
	current uint64
	leading bool
}

func (t *terms) next() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.current++
	return t.current
}

// set records what term decided, unless a later term began.
func (t *terms) set(term uint64, leading bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if term != t.current || leading == t.leading {
		return
	}
	t.leading = leading
	t.lead(leading)
}

func (t *terms) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.current++
	if t.leading {
		t.leading = false
		t.lead(false)
	}
}
