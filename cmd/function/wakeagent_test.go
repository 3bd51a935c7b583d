package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/fn/statemetrics"
)

// TestCommandLine: flags with no command select serve, as Crossplane
// starts the image; wake-agent selects the agent with its defaults.
func TestCommandLine(t *testing.T) {
	cases := map[string]struct {
		args        []string
		wantCommand string
		check       func(t *testing.T, c *CLI)
	}{
		"NoArguments": {
			wantCommand: "serve",
		},
		"ServeFlagsWithoutCommand": {
			args:        []string{"--insecure", "--address=:1234", "--metrics-address=", "-d"},
			wantCommand: "serve",
			check: func(t *testing.T, c *CLI) {
				want := ServeCmd{Debug: true, Network: "tcp", Address: ":1234", Insecure: true, MaxRecvMessageSize: 4,
					StateMetrics: true, StateMetricsLease: statemetrics.DefaultLeaseName, StateMetricsMaxObjects: statemetrics.DefaultMaxObjects}
				if diff := cmp.Diff(want, c.Serve); diff != "" {
					t.Errorf("serve flags (-want +got):\n%s", diff)
				}
			},
		},
		"StateMetricsFlags": {
			args:        []string{"--no-state-metrics", "--state-metrics-lease=mine", "--state-metrics-lease-namespace=fns", "--state-metrics-max-objects=5"},
			wantCommand: "serve",
			check: func(t *testing.T, c *CLI) {
				want := ServeCmd{Network: "tcp", Address: ":9443", MetricsAddress: ":8080", MaxRecvMessageSize: 4,
					StateMetrics: false, StateMetricsLease: "mine", StateMetricsLeaseNamespace: "fns", StateMetricsMaxObjects: 5}
				if diff := cmp.Diff(want, c.Serve); diff != "" {
					t.Errorf("serve flags (-want +got):\n%s", diff)
				}
			},
		},
		"ExplicitServe": {
			args:        []string{"serve", "--insecure"},
			wantCommand: "serve",
		},
		"WakeAgentDefaults": {
			args:        []string{"wake-agent"},
			wantCommand: "wake-agent",
			check: func(t *testing.T, c *CLI) {
				want := WakeAgentCmd{Address: "127.0.0.1:9902", MetricsAddress: ":9903", HoldTimeout: 120 * time.Second, StampInterval: 5 * time.Second}
				if diff := cmp.Diff(want, c.WakeAgent); diff != "" {
					t.Errorf("wake-agent flags (-want +got):\n%s", diff)
				}
			},
		},
		"WakeAgentFlags": {
			args:        []string{"wake-agent", "--hold-timeout=30s", "--stamp-interval=2s", "--max-holds=7", "--namespace=ns"},
			wantCommand: "wake-agent",
			check: func(t *testing.T, c *CLI) {
				want := WakeAgentCmd{Address: "127.0.0.1:9902", MetricsAddress: ":9903", Namespace: "ns", HoldTimeout: 30 * time.Second, StampInterval: 2 * time.Second, MaxHolds: 7}
				if diff := cmp.Diff(want, c.WakeAgent); diff != "" {
					t.Errorf("wake-agent flags (-want +got):\n%s", diff)
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// The environment's variables are flags' defaults too.
			for _, env := range []string{"TLS_SERVER_CERTS_DIR", "KUBECONFIG", "POD_NAMESPACE"} {
				t.Setenv(env, "")
			}
			c := &CLI{}
			p, err := kong.New(c, kong.Exit(func(int) { t.Fatal("kong exited") }))
			if err != nil {
				t.Fatal(err)
			}
			ctx, err := p.Parse(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := ctx.Command(); got != tc.wantCommand {
				t.Errorf("command %q, want %q", got, tc.wantCommand)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	bin := buildFunction(t)
	for name, tc := range map[string]struct {
		args []string
		want []string
	}{
		"WakeAgent": {args: []string{"wake-agent", "--help"}, want: []string{"--hold-timeout=120s", "--stamp-interval=5s", "--max-holds=0", `--address="127.0.0.1:9902"`, `--metrics-address=":9903"`}},
		"Serve":     {args: []string{"serve", "--help"}, want: []string{"--tls-certs-dir", "--insecure", `--address=":9443"`}},
		"Top":       {args: []string{"--help"}, want: []string{"serve", "wake-agent"}},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := exec.CommandContext(t.Context(), bin, tc.args...).CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %v\n%s", tc.args, err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("help lacks %s:\n%s", w, out)
				}
			}
		})
	}
}

// fakeAPIServer answers the agent's EndpointSlice list with none and holds
// its watches open; nothing else is asked of it here.
func fakeAPIServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
			return
		}
		_, _ = io.WriteString(w, `{"kind":"EndpointSliceList","apiVersion":"discovery.k8s.io/v1","metadata":{"resourceVersion":"1"},"items":[]}`)
	}))
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + srv.URL + "}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// TestWakeAgentServesUntilSIGTERM runs the wake-agent command: it serves
// /healthz on both listeners and exits cleanly on SIGTERM.
func TestWakeAgentServesUntilSIGTERM(t *testing.T) {
	bin := buildFunction(t)
	hold, metrics := freeAddr(t), freeAddr(t)
	cmd := exec.CommandContext(t.Context(), bin, "wake-agent", "--namespace=gw", "--address="+hold, "--metrics-address="+metrics)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+fakeAPIServer(t), "ENVOY_MEMORY_LIMIT_BYTES=1073741824")
	var out strings.Builder
	stop := startCommand(t, cmd, &out)
	waitListening(t, hold)
	waitListening(t, metrics)

	for _, addr := range []string{hold, metrics} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/healthz", nil)
		if err != nil {
			t.Fatal(err)
		}
		rsp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = rsp.Body.Close()
		if rsp.StatusCode != http.StatusOK {
			t.Errorf("%s/healthz: %d", addr, rsp.StatusCode)
		}
	}

	if err := stop(syscall.SIGTERM); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "hold capacity 128") {
		t.Errorf("the capacity and its reason are not logged:\n%s", out.String())
	}
}

func TestWakeAgentRefusesBadFlags(t *testing.T) {
	bin := buildFunction(t)
	for name, tc := range map[string]struct {
		args []string
		env  []string
		want string
	}{
		"StampIntervalOverHalfTheTTL": {args: []string{"--stamp-interval=3m"}, want: "--stamp-interval must be positive and at most 2m30s"},
		"NoHoldTimeout":               {args: []string{"--hold-timeout=0s"}, want: "--hold-timeout must be positive"},
		"NoAPI":                       {env: []string{"KUBECONFIG="}, want: "no Kubernetes API"},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"wake-agent", "--namespace=gw", "--address=" + freeAddr(t), "--metrics-address=" + freeAddr(t)}, tc.args...)
			cmd := exec.CommandContext(t.Context(), bin, args...)
			cmd.Env = append(append(os.Environ(), "KUBECONFIG=", "KUBERNETES_SERVICE_HOST="), tc.env...)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("want an error saying %q, got err=%v:\n%s", tc.want, err, out)
			}
		})
	}
}
