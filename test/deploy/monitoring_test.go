package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/firebolt-db/firebolt-crossplane/internal/xptools"
	"github.com/firebolt-db/firebolt-crossplane/test/monitoringkit"
)

// promtool runs promtool of the pinned Prometheus module and fails the
// test with its output unless it succeeds.
func promtool(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), xptools.Promtool(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func write(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The PrometheusRule's spec is a rule file promtool accepts, lint included.
func TestAlertRulesPassPromtool(t *testing.T) {
	_, spec, err := monitoringkit.Rules(xptools.Root())
	if err != nil {
		t.Fatal(err)
	}
	promtool(t, "check", "rules", "--lint=all", "--lint-fatal", write(t, "rules.yaml", spec))
}

// Every alert says how bad it is and what it means, and docs/monitoring.md
// explains it.
func TestAlertsAreDescribedAndDocumented(t *testing.T) {
	pr, _, err := monitoringkit.Rules(xptools.Root())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(xptools.Root(), "docs", "monitoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" {
				t.Errorf("group %s has a rule that is no alert: %q", g.Name, r.Expr)
				continue
			}
			if s := r.Labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("alert %s: severity %q, want warning or critical", r.Alert, s)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %s lacks a summary or a description", r.Alert)
			}
			if !strings.Contains(string(doc), "`"+r.Alert+"`") {
				t.Errorf("docs/monitoring.md does not explain alert %s", r.Alert)
			}
		}
	}
	if n == 0 {
		t.Error("the PrometheusRule holds no rules")
	}
}

// Every query of the dashboard parses: promtool checks them as recording
// rules, with the dashboard's variables as Grafana fills them.
func TestDashboardQueriesParse(t *testing.T) {
	qs, err := monitoringkit.DashboardQueries(xptools.Root(), map[string]string{"namespace": ".*", "__rate_interval": "5m"})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) == 0 {
		t.Fatal("the dashboard holds no queries")
	}
	var b strings.Builder
	b.WriteString("groups:\n- name: dashboard\n  rules:\n")
	for i, q := range qs {
		if strings.Contains(q.Expr, "$") {
			t.Errorf("panel %q: a variable is left in %q", q.Panel, q.Expr)
		}
		fmt.Fprintf(&b, "  - record: dashboard:query_%d\n    expr: %q\n", i, q.Expr)
	}
	promtool(t, "check", "rules", write(t, "dashboard.yaml", []byte(b.String())))
}

// The scrape configuration the Prometheus Operator would derive from the
// PodMonitors, with the rules, is a Prometheus configuration promtool
// accepts. (The end-to-end test runs it against the real pods.)
func TestPodMonitorsDeriveAValidConfig(t *testing.T) {
	pms, err := monitoringkit.PodMonitors(xptools.Root())
	if err != nil {
		t.Fatal(err)
	}
	_, spec, err := monitoringkit.Rules(xptools.Root())
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := write(t, "kubeconfig", []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: https://127.0.0.1:6443}}]\n"+
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"))
	rules := write(t, "rules.yaml", spec)
	var b strings.Builder
	fmt.Fprintf(&b, "rule_files: [%q]\nscrape_configs:\n", rules)
	ports := map[string]bool{}
	honoured := false
	for _, pm := range pms {
		sc, err := pm.ScrapeConfigs(kubeconfig, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(sc)
		for _, ep := range pm.Spec.PodMetricsEndpoints {
			ports[pm.Metadata.Name+"/"+ep.Port] = true
			honoured = honoured || (pm.Metadata.Name == "function-firebolt" && ep.HonorLabels)
		}
	}
	promtool(t, "check", "config", "--lint=none", write(t, "prometheus.yml", []byte(b.String())))
	for _, want := range []string{"function-firebolt/metrics", "crossplane/metrics", "firebolt-gateway-wake-agent/wake-metrics", "firebolt-engines/metrics"} {
		if !ports[want] {
			t.Errorf("no PodMonitor endpoint %s; have %v", want, ports)
		}
	}
	if !honoured {
		t.Error("the function's PodMonitor does not keep the function's own labels (honorLabels): the original's namespace and instance labels would be renamed exported_namespace and exported_instance")
	}
}

// stateGauge is a series of the original's that the function exports from
// the one replica holding the Lease: while a second replica takes over,
// both export it for a moment, so every query reads it through max by.
// Counters (_total) are per replica by design and are summed.
var stateGauge = regexp.MustCompile(`\bfirebolt_(engine|instance)_[a-z_]+`)

// dedup is the aggregation a state gauge must sit directly inside.
var dedup = regexp.MustCompile(`max by \([a-z_, ]+\) \(\s*$`)

// Every dashboard query and alert reads the state gauges through max by,
// so two exporting replicas never double a count.
func TestStateGaugesAreDeduplicated(t *testing.T) {
	qs, err := monitoringkit.DashboardQueries(xptools.Root(), map[string]string{"namespace": ".*", "__rate_interval": "5m"})
	if err != nil {
		t.Fatal(err)
	}
	exprs := map[string]string{}
	for _, q := range qs {
		exprs["panel "+q.Panel] += q.Expr + "\n"
	}
	pr, _, err := monitoringkit.Rules(xptools.Root())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			exprs["alert "+r.Alert] += r.Expr + "\n"
		}
	}
	n := 0
	for where, expr := range exprs {
		for _, m := range stateGauge.FindAllStringIndex(expr, -1) {
			name := expr[m[0]:m[1]]
			if strings.HasSuffix(name, "_total") {
				continue
			}
			n++
			if !dedup.MatchString(expr[:m[0]]) {
				t.Errorf("%s reads %s without max by (namespace, name, …) around it:\n%s", where, name, expr)
			}
		}
	}
	if n == 0 {
		t.Error("no query reads a state gauge")
	}
}
