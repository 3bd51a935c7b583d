package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// The function's log as it writes it (zap's console encoder at debug
// level): one call for the instance demo-xgtcv that composed, one that
// failed, and calls of another instance and an engine.
const functionLog = `2026-11-28T02:43:30.905Z	DEBUG	fn/calllog.go:27	Composed instance	{"tag": "47c8", "kind": "XFireboltInstance", "name": "demo-xgtcv", "phase": "Provisioning", "resources": 7}
2026-11-28T02:43:30.905Z	DEBUG	fn/calllog.go:27	Composed	{"tag": "47c8", "kind": "XFireboltInstance", "name": "demo-xgtcv"}
2026-11-28T02:43:31.100Z	INFO	fn/calllog.go:23	Cannot compose	{"tag": "47c9", "kind": "XFireboltInstance", "name": "demo-xgtcv", "error": "cannot read"}
2026-11-28T02:43:31.200Z	DEBUG	fn/calllog.go:27	Composed	{"tag": "47ca", "kind": "XFireboltInstance", "name": "demo-xgtcv2"}
2026-11-28T02:43:31.300Z	DEBUG	fn/calllog.go:27	Composed engine	{"tag": "47cb", "kind": "XFireboltEngine", "name": "scale-0001-abcde", "engine": "scale-0001"}
2026-11-28T02:43:31.300Z	DEBUG	fn/calllog.go:27	Composed	{"tag": "47cb", "kind": "XFireboltEngine", "name": "scale-0001-abcde"}
2026-11-28T02:43:31.400Z	DEBUG	fn/calllog.go:27	Composed	{"tag": "47cc", "kind": "XFireboltInstance", "name": "demo-xg`

func TestCallEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "function.log")
	if err := os.WriteFile(path, []byte(functionLog), 0o600); err != nil {
		t.Fatal(err)
	}
	n, offset, err := countLines(path, 0, callEnd("demo-xgtcv"))
	if err != nil || n != 2 {
		t.Fatalf("countLines(callEnd): got %d calls, %v; want 2 (a composed and a failed call, not the composer's line nor another instance's)", n, err)
	}
	// The line still being written is read once it is whole.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("tcv\"}\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if n, _, err := countLines(path, offset, callEnd("demo-xgtcv")); err != nil || n != 1 {
		t.Errorf("countLines(callEnd) from %d: got %d calls, %v; want the one completed line", offset, n, err)
	}
}

func TestDescribeKeys(t *testing.T) {
	at := metav1.NewTime(time.Unix(0, 0))
	st := v1alpha1.AuthStatus{SigningKeys: []v1alpha1.SigningKeyStatus{
		{ID: "signing-1", Phase: v1alpha1.SigningKeyValidationOnly, DemotedAt: &at, RetireEligibleAt: &at},
		{ID: "signing-2", Phase: v1alpha1.SigningKeyActive},
	}}
	if got, want := describeKeys(st), "signing-1 ValidationOnly (retire-eligible), signing-2 Active"; got != want {
		t.Errorf("describeKeys(): got %q, want %q", got, want)
	}
	if got := describeKeys(v1alpha1.AuthStatus{}); got != "(none)" {
		t.Errorf("describeKeys() of no keys: got %q, want (none)", got)
	}
	if !hasKey(st, "signing-2") || hasKey(st, "signing-3") {
		t.Errorf("hasKey(): wrong for %v", st.SigningKeys)
	}
}
