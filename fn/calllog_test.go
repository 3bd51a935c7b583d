package fn

import (
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
)

// TestCallLoggerWritesWhatWithValuesWould: the per-call logger writes the
// same lines, fields in the same order, as loggers derived with
// WithValues, at info and debug level and through nested WithValues, and
// loggers derived from one another do not share fields.
func TestCallLoggerWritesWhatWithValuesWould(t *testing.T) {
	logs := func(fn func(base logging.Logger)) []string {
		var lines []string
		base := logging.NewLogrLogger(funcr.New(func(prefix, args string) {
			lines = append(lines, prefix+" "+args)
		}, funcr.Options{Verbosity: 1}))
		fn(base)
		return lines
	}
	script := func(tagged logging.Logger) {
		tagged.Info("before the kind is known", "a", 1)
		call := tagged.WithValues("kind", "XFireboltEngine", "name", "demo")
		other := tagged.WithValues("kind", "XFireboltInstance", "name", "inst")
		call.Debug("composed")
		call.WithValues("generation", 2).Info("rolling", "phase", "creating")
		other.Info("the other")
		call.Info("again")
	}
	want := logs(func(base logging.Logger) { script(base.WithValues("tag", "t")) })
	got := logs(func(base logging.Logger) { script(newCallLogger(base, "tag", "t")) })
	if len(want) != 5 {
		t.Fatalf("want 5 lines from WithValues loggers, got %q", want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("callLogger lines: -WithValues, +callLogger:\n%s", diff)
	}
}
