package kubectlfirebolt

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestServerClock: the clock follows the Date header of the last
// response, to the second, and is the local clock before any.
func TestServerClock(t *testing.T) {
	local := time.Date(2026, 3, 1, 12, 0, 0, 400_000_000, time.UTC)
	c := &serverClock{local: func() time.Time { return local }}
	if got := c.Now(); !got.Equal(local) {
		t.Errorf("before any response: %s, want the local %s", got, local)
	}
	for _, tc := range []struct {
		date string
		want time.Time
	}{
		{"Sun, 01 Mar 2026 12:10:00 GMT", local.Add(10 * time.Minute)},
		{"Sun, 01 Mar 2026 11:53:00 GMT", local.Add(-7 * time.Minute)},
		// In step but for the header's truncation: not moved.
		{"Sun, 01 Mar 2026 12:00:00 GMT", local},
		// Unparseable: the last good offset stays.
		{"yesterday", local},
	} {
		c.observe(http.Header{"Date": []string{tc.date}})
		if got := c.Now(); !got.Equal(tc.want) {
			t.Errorf("after Date %q: %s, want %s", tc.date, got, tc.want)
		}
	}
}

// TestWakeStampsServerTime: engine wake, through the real clients against
// an API server whose clock is ten minutes ahead of this machine's, stamps
// the server's time, which the function in that cluster accepts.
func TestWakeStampsServerTime(t *testing.T) {
	ahead := 10 * time.Minute
	claim := []byte(`{"apiVersion":"compute.firebolt.io/v1alpha1","kind":"FireboltEngine",` +
		`"metadata":{"name":"demo","namespace":"firebolt","generation":1},"spec":{"instanceRef":"demo","replicas":1},` +
		`"status":{"phase":"stopped","autoStop":{"reason":"Idle","replicas":0}}}`)
	var mu sync.Mutex
	var patch []byte
	var serverNow time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/compute.firebolt.io/v1alpha1/namespaces/firebolt/fireboltengines/demo" {
			http.NotFound(w, r)
			return
		}
		now := time.Now().Add(ahead)
		w.Header().Set("Date", now.UTC().Format(http.TimeFormat))
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPatch {
			b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
			mu.Lock()
			patch, serverNow = b, now
			mu.Unlock()
		}
		_, _ = w.Write(claim)
	}))
	defer srv.Close()
	kubeconfig := kubeconfigFor(t, srv.URL)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	if code := Run(ctx, []string{"engine", "wake", "demo", "--kubeconfig", kubeconfig}, &out, &errOut, NewClients); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
	mu.Lock()
	defer mu.Unlock()
	var p struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Fatalf("patch %q: %v", patch, err)
	}
	stamp, err := time.Parse(time.RFC3339, p.Metadata.Annotations["firebolt.io/wake-requested"])
	if err != nil {
		t.Fatalf("patch %s: %v", patch, err)
	}
	// The stamp is the server's time of the read before it, to the second.
	if d := serverNow.Sub(stamp); d < 0 || d > 5*time.Second {
		t.Errorf("stamp %s, the server's time at the patch %s: %s apart, want the server's clock", stamp, serverNow.UTC(), d)
	}
	if diff := cmp.Diff("fireboltengine/demo: wake requested (firebolt.io/wake-requested="+stamp.UTC().Format(time.RFC3339)+")\n", out.String()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}
