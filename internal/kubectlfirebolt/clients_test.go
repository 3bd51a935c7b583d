package kubectlfirebolt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const devKubeconfig = `apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev
  cluster: {server: "https://dev.example:6443"}
- name: prod
  cluster: {server: "https://prod.example:6443"}
users:
- name: me
  user: {token: not-a-secret}
contexts:
- name: dev
  context: {cluster: dev, user: me, namespace: dev-ns}
- name: prod
  context: {cluster: prod, user: me}
`

// stagingKubeconfig is a second file for KUBECONFIG lists: its context is
// merged in; the first file's current-context wins.
const stagingKubeconfig = `apiVersion: v1
kind: Config
current-context: staging
clusters:
- name: staging
  cluster: {server: "https://staging.example:6443"}
users:
- name: other
  user: {token: not-a-secret-either}
contexts:
- name: staging
  context: {cluster: staging, user: other, namespace: stage}
`

// TestLoadConfig: the kubeconfig is found and read as kubectl reads it.
func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "dev.yaml")
	staging := filepath.Join(dir, "staging.yaml")
	for p, c := range map[string]string{dev: devKubeconfig, staging: stagingKubeconfig} {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	type want struct{ Host, Namespace, Err string }
	cases := map[string]struct {
		flags      Flags
		kubeconfig string
		want       want
	}{
		"Explicit":                {flags: Flags{Kubeconfig: dev}, want: want{Host: "https://dev.example:6443", Namespace: "dev-ns"}},
		"Context":                 {flags: Flags{Kubeconfig: dev, Context: "prod"}, want: want{Host: "https://prod.example:6443", Namespace: "default"}},
		"NamespaceFlag":           {flags: Flags{Kubeconfig: dev, Namespace: "mine"}, want: want{Host: "https://dev.example:6443", Namespace: "mine"}},
		"KUBECONFIG":              {kubeconfig: dev, want: want{Host: "https://dev.example:6443", Namespace: "dev-ns"}},
		"KUBECONFIGList":          {kubeconfig: dev + string(os.PathListSeparator) + staging, flags: Flags{Context: "staging"}, want: want{Host: "https://staging.example:6443", Namespace: "stage"}},
		"FlagBeatsKUBECONFIG":     {kubeconfig: staging, flags: Flags{Kubeconfig: dev}, want: want{Host: "https://dev.example:6443", Namespace: "dev-ns"}},
		"MissingFile":             {flags: Flags{Kubeconfig: filepath.Join(dir, "nope")}, want: want{Err: "cannot load kubeconfig"}},
		"UnknownContext":          {flags: Flags{Kubeconfig: dev, Context: "qa"}, want: want{Err: `context "qa" does not exist`}},
		"NoKubeconfigAnywhere":    {kubeconfig: filepath.Join(dir, "absent"), want: want{Err: "cannot load kubeconfig"}},
		"NamespaceFlagNoContextN": {flags: Flags{Kubeconfig: dev, Context: "prod", Namespace: "x"}, want: want{Host: "https://prod.example:6443", Namespace: "x"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.kubeconfig)
			t.Setenv("HOME", dir)
			cfg, ns, err := LoadConfig(tc.flags)
			var got want
			if err != nil {
				got.Err = err.Error()
				if !strings.Contains(got.Err, tc.want.Err) || tc.want.Err == "" {
					t.Fatalf("error %q, want one containing %q", got.Err, tc.want.Err)
				}
				return
			}
			got.Host, got.Namespace = cfg.Host, ns
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if cfg.UserAgent != "kubectl-firebolt/dev" {
				t.Errorf("user agent %q", cfg.UserAgent)
			}
		})
	}
}

// TestNewClients: the real clients come from the kubeconfig, in the
// context's namespace, with the SPDY forwarder and the API-server scraper.
func TestNewClients(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(p, []byte(devKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := NewClients(Flags{Kubeconfig: p})
	if err != nil {
		t.Fatal(err)
	}
	if c.Namespace != "dev-ns" || c.Dynamic == nil || c.Core == nil || c.Scraper == nil {
		t.Errorf("clients %+v", c)
	}
	if _, ok := c.Forwarder.(spdyForwarder); !ok {
		t.Errorf("forwarder %T, want spdyForwarder", c.Forwarder)
	}
	if _, err := NewClients(Flags{Kubeconfig: p, Context: "qa"}); err == nil {
		t.Error("an unknown context made clients")
	}
}
