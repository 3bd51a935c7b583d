package kubectlfirebolt

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// TestEngineWake: wake stamps the annotation the function reads, with
// the value the gateway's wake agent writes, warns when auto-stop is off,
// and with --wait waits until the engine serves.
func TestEngineWake(t *testing.T) {
	stopped := obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: sleepy, namespace: firebolt, generation: 2, resourceVersion: "7"}
spec: {instanceRef: demo, replicas: 2, autoStop: {enabled: true, activeReplicas: 2}}
status: {phase: stopped, observedGeneration: 2, autoStop: {replicas: 0, reason: Idle}}
`)
	awake := func(phase string, ready string) *unstructured.Unstructured {
		u := stopped.DeepCopy()
		u.Object["status"] = status(phase, 2, ready)
		return u
	}
	cases := map[string]struct {
		args   []string
		events []*unstructured.Unstructured
		want   result
		// stamp is the annotation expected on the claim afterwards.
		stamp string
	}{
		"Stamps": {
			args:  []string{"engine", "wake", "sleepy"},
			want:  result{Stdout: "fireboltengine/sleepy: wake requested (firebolt.io/wake-requested=2026-03-01T12:00:00Z)\n"},
			stamp: "2026-03-01T12:00:00Z",
		},
		"Name": {
			args:  []string{"engine", "wake", "sleepy", "-o", "name"},
			want:  result{Stdout: "fireboltengine/sleepy\n"},
			stamp: "2026-03-01T12:00:00Z",
		},
		"AndWaits": {
			args:   []string{"engine", "wake", "sleepy", "--wait"},
			events: []*unstructured.Unstructured{awake("creating", "False"), awake("stable", "True")},
			want: result{Stdout: "fireboltengine/sleepy: wake requested (firebolt.io/wake-requested=2026-03-01T12:00:00Z)\n" +
				"fireboltengine/sleepy: stopped (spec generation 2, 2 in effect)\n" +
				"fireboltengine/sleepy: creating (spec generation 2, 2 in effect)\n" +
				"fireboltengine/sleepy: stable and Ready, generation 2 of the spec in effect\n"},
			stamp: "2026-03-01T12:00:00Z",
		},
		"WaitTimesOut": {
			args:   []string{"engine", "wake", "sleepy", "--wait", "--timeout", "30ms"},
			events: []*unstructured.Unstructured{awake("creating", "False")},
			want: result{Code: 1, Stdout: "fireboltengine/sleepy: wake requested (firebolt.io/wake-requested=2026-03-01T12:00:00Z)\n" +
				"fireboltengine/sleepy: stopped (spec generation 2, 2 in effect)\n" +
				"fireboltengine/sleepy: creating (spec generation 2, 2 in effect)\n",
				Stderr: "error: timed out after 30ms waiting for fireboltengine/sleepy: last phase creating, spec generation 2, 2 in effect\n  Ready=False Creating\n"},
			stamp: "2026-03-01T12:00:00Z",
		},
		"AutoStopOff": {
			args: []string{"engine", "wake", "analytics"},
			want: result{Stdout: "fireboltengine/analytics: wake requested (firebolt.io/wake-requested=2026-03-01T12:00:00Z)\n",
				Stderr: "warning: auto-stop is not enabled on fireboltengine/analytics: the stamp changes nothing, the engine runs spec.replicas (2)\n"},
		},
		"StoppedBySpec": {
			args: []string{"engine", "wake", "nightly", "--wait"},
			want: result{Code: 1, Stdout: "fireboltengine/nightly: wake requested (firebolt.io/wake-requested=2026-03-01T12:00:00Z)\n",
				Stderr: "error: fireboltengine/nightly is stopped by spec.replicas 0, not by auto-stop: a wake cannot start it; set spec.replicas\n"},
		},
		"NotFound": {
			args: []string{"engine", "wake", "nope"},
			want: result{Code: 1, Stderr: "error: fireboltengine \"nope\" not found in namespace \"firebolt\"\n"},
		},
		"BadOutput": {
			args: []string{"engine", "wake", "sleepy", "-o", "json"},
			want: result{Code: 1, Stderr: "error: -o json: engine wake prints table, name only\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeCluster(t, append(engines(t), stopped.DeepCopy()))
			w := watch.NewRaceFreeFake()
			for _, ev := range tc.events {
				w.Modify(ev)
			}
			f.watches(w)
			got := f.run(t, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.stamp == "" {
				return
			}
			u, err := f.dyn.Resource(engineResource).Namespace(testNamespace).Get(t.Context(), "sleepy", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := u.GetAnnotations()["firebolt.io/wake-requested"]; got != tc.stamp {
				t.Errorf("wake annotation %q, want %q", got, tc.stamp)
			}
		})
	}
}

// TestEngineDelete: delete deletes the claim; a missing one is not an
// error, as the original's --ignore-not-found, and leaves stdout empty.
func TestEngineDelete(t *testing.T) {
	cases := map[string]struct {
		args []string
		want result
		left []string
	}{
		"Deletes":    {[]string{"engine", "delete", "adhoc"}, result{Stdout: "fireboltengine \"adhoc\" deleted\n"}, []string{"analytics", "new", "nightly"}},
		"Name":       {[]string{"engine", "delete", "adhoc", "-o", "name"}, result{Stdout: "fireboltengine/adhoc\n"}, []string{"analytics", "new", "nightly"}},
		"Missing":    {[]string{"engine", "delete", "nope"}, result{Stderr: "fireboltengine \"nope\" not found in namespace \"firebolt\": nothing to delete\n"}, []string{"adhoc", "analytics", "new", "nightly"}},
		"MissingN":   {[]string{"engine", "delete", "nope", "-o", "name"}, result{Stderr: "fireboltengine \"nope\" not found in namespace \"firebolt\": nothing to delete\n"}, []string{"adhoc", "analytics", "new", "nightly"}},
		"OtherNS":    {[]string{"engine", "delete", "adhoc", "-n", "other"}, result{Stderr: "fireboltengine \"adhoc\" not found in namespace \"other\": nothing to delete\n"}, []string{"adhoc", "analytics", "new", "nightly"}},
		"BadTimeout": {[]string{"engine", "delete", "adhoc", "--timeout", "0s"}, result{Code: 1, Stderr: "error: --timeout 0s: must be a positive duration such as 90s or 10m\n"}, []string{"adhoc", "analytics", "new", "nightly"}},
		"NoYAML":     {[]string{"engine", "delete", "adhoc", "-o", "yaml"}, result{Code: 1, Stderr: "error: -o yaml: engine delete prints table, name only\n"}, []string{"adhoc", "analytics", "new", "nightly"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeCluster(t, engines(t))
			got := f.run(t, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			l, err := f.dyn.Resource(engineResource).Namespace(testNamespace).List(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			left := make([]string, 0, len(l.Items))
			for _, u := range l.Items {
				left = append(left, u.GetName())
			}
			if diff := cmp.Diff(tc.left, left); diff != "" {
				t.Errorf("engines left (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInstanceID: the id in use is status.id.
func TestInstanceID(t *testing.T) {
	cases := map[string]struct {
		args []string
		want result
	}{
		"ID":       {[]string{"instance", "id", "demo"}, result{Stdout: "01JBCDEFGHJKMNPQRSTVWXYZ00\n"}},
		"NoIDYet":  {[]string{"instance", "id", "fresh"}, result{Code: 1, Stderr: "error: fireboltinstance \"fresh\" has no id yet: status.id is empty until the function first composes the instance\n"}},
		"NotFound": {[]string{"instance", "id", "nope"}, result{Code: 1, Stderr: "error: fireboltinstance \"nope\" not found in namespace \"firebolt\"\n"}},
		"NoJSON":   {[]string{"instance", "id", "demo", "-o", "json"}, result{Code: 1, Stderr: "error: -o json: instance id prints table only\n"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := newFakeCluster(t, instances(t)).run(t, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRun: the parts of Run no one command owns: version, help, usage
// errors, the global flags handed to the clients, and a failure to make
// clients.
func TestRun(t *testing.T) {
	cases := map[string]struct {
		args  []string
		want  result
		flags Flags
	}{
		"Version":        {args: []string{"version"}, want: result{Stdout: "kubectl-firebolt dev\n"}},
		"VersionNoJSON":  {args: []string{"version", "-o", "json"}, want: result{Code: 1, Stderr: "error: -o json: version prints table only\n"}},
		"NoCommand":      {args: nil, want: result{Code: 1, Stderr: "error: expected one of \"engine\", \"instance\", \"migrate\", \"version\"\n"}},
		"UnknownCommand": {args: []string{"engines"}, want: result{Code: 1, Stderr: "error: unexpected argument engines, did you mean \"engine\"?\n"}},
		"UnknownFlag":    {args: []string{"engine", "list", "--all"}, want: result{Code: 1, Stderr: "error: unknown flag --all\n"}},
		"GlobalFlags": {
			args:  []string{"--kubeconfig", "/tmp/kc", "--context", "prod", "engine", "list", "-n", "other"},
			want:  result{Stdout: "NAME      INSTANCE    PHASE    READY\nfaraway   elsewhere   stable   -\n"},
			flags: Flags{Namespace: "other", Context: "prod", Kubeconfig: "/tmp/kc"},
		},
		"GlobalFlagsAfterTheCommand": {
			args:  []string{"engine", "list", "--namespace=other", "--context=prod"},
			want:  result{Stdout: "NAME      INSTANCE    PHASE    READY\nfaraway   elsewhere   stable   -\n"},
			flags: Flags{Namespace: "other", Context: "prod"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeCluster(t, engines(t))
			got := f.run(t, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.flags, f.flags); diff != "" {
				t.Errorf("flags handed to the clients (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHelp: --help prints the usage on stdout and exits 0, naming every
// command, without making clients.
func TestHelp(t *testing.T) {
	f := newFakeCluster(t, nil)
	got := f.run(t, "--help")
	if got.Code != 0 || got.Stderr != "" {
		t.Fatalf("exit %d, stderr %q", got.Code, got.Stderr)
	}
	for _, c := range []string{"engine list", "engine create", "engine delete", "engine wait", "engine wake", "engine status", "engine port-forward",
		"instance list", "instance id", "instance port-forward", "version", "--namespace", "--context", "--kubeconfig", "--output"} {
		if !strings.Contains(got.Stdout, c) {
			t.Errorf("help does not name %q:\n%s", c, got.Stdout)
		}
	}
	if f.flags != (Flags{}) || len(f.dyn.Actions()) != 0 {
		t.Errorf("help made clients or called the API: %+v %v", f.flags, f.dyn.Actions())
	}
}
