package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
	"github.com/firebolt-db/firebolt-crossplane/test/monitoringkit"
)

// The monitoring kit scenario's Prometheus: started from the kit, and the
// queries that check the kit's dashboard and alerts against it.

// kitPrometheus is the scenario's Prometheus and its API.
type kitPrometheus struct {
	api  promv1.API
	addr string
}

// startKitPrometheus runs a Prometheus configured from the kit: the
// PodMonitors' scrape configuration (pods of this namespace only), the
// function's replicas and Crossplane as static targets with the
// function's PodMonitor's settings (the harness runs them as processes,
// not pods), and the PrometheusRule's rules.
func (s *scenario) startKitPrometheus(root string) kitPrometheus {
	s.t.Helper()
	pms, err := monitoringkit.PodMonitors(root)
	s.must(err)
	var scrape strings.Builder
	for _, pm := range pms {
		switch pm.Metadata.Name {
		case "function-firebolt":
			// Each process gets the pod label the PodMonitor would give
			// its pod: with honorLabels it is what tells the replicas'
			// series apart.
			ep := pm.Spec.PodMetricsEndpoints[0]
			fmt.Fprintf(&scrape, "- job_name: function-firebolt\n  honor_labels: %t\n  metrics_path: %q\n  static_configs:\n"+
				"  - targets: [%q]\n    labels: {pod: %q}\n  - targets: [%q]\n    labels: {pod: %q}\n",
				ep.HonorLabels, ep.Path, harness.FunctionMetricsAddress, functionPod, replicaMetricsAddress, replicaPod)
		case "crossplane":
			ep := pm.Spec.PodMetricsEndpoints[0]
			fmt.Fprintf(&scrape, "- job_name: crossplane\n  honor_labels: %t\n  metrics_path: %q\n  static_configs:\n  - targets: [%q]\n",
				ep.HonorLabels, ep.Path, harness.CrossplaneMetricsAddress)
		default:
			sc, err := pm.ScrapeConfigs(cp.Kubeconfig, []string{s.ns}, harness.ScrapeInterval.String())
			s.must(err)
			scrape.WriteString(sc)
		}
	}
	_, spec, err := monitoringkit.Rules(root)
	s.must(err)
	rules := filepath.Join(s.t.TempDir(), "rules.yaml")
	s.must(os.WriteFile(rules, spec, 0o600))
	p, err := cp.StartPrometheusWith(s.ctx, "prometheus-"+s.ns, kitPrometheusAddress, harness.PrometheusConfig{ScrapeConfigs: scrape.String(), RuleFiles: []string{rules}})
	s.must(err)
	s.t.Cleanup(p.Stop)
	c, err := promapi.NewClient(promapi.Config{Address: "http://" + kitPrometheusAddress})
	s.must(err)
	return kitPrometheus{api: promv1.NewAPI(c), addr: kitPrometheusAddress}
}

func (p kitPrometheus) vector(ctx context.Context, q string) (model.Vector, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, _, err := p.api.Query(ctx, q, time.Now())
	if err != nil {
		return nil, err
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("query %s returned a %s, want a vector", q, v.Type())
	}
	return vec, nil
}

// value is the single value of q, NaN-free; an error when it is not one
// series.
func (p kitPrometheus) value(ctx context.Context, q string) (float64, error) {
	v, err := p.vector(ctx, q)
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("%d series", len(v))
	}
	return float64(v[0].Value), nil
}

// series reads every series matching selector as name{label} → value, the
// label being the one that tells a family's series apart (phase, type, or
// the info labels), and checks the labels every series must carry.
func (p kitPrometheus) series(ctx context.Context, selector string, must model.LabelSet) (map[string]float64, error) {
	v, err := p.vector(ctx, selector)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, smp := range v {
		for k, want := range must {
			if smp.Metric[k] != want {
				return nil, fmt.Errorf("series %s: %s=%q, want %q", smp.Metric, k, smp.Metric[k], want)
			}
		}
		key := string(smp.Metric[model.MetricNameLabel])
		var extra []string
		for _, l := range []model.LabelName{"phase", "type", "step", "id", "postgres_mode"} {
			if val, ok := smp.Metric[l]; ok {
				extra = append(extra, string(l)+"="+string(val))
			}
		}
		if len(extra) > 0 {
			key += "{" + strings.Join(extra, ",") + "}"
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("two series of %s: more than one process exports it", key)
		}
		out[key] = float64(smp.Value)
	}
	return out, nil
}

// checkDashboardQueries: every query of the dashboard, with this
// namespace chosen, parses and returns series.
func (s *scenario) checkDashboardQueries(prom kitPrometheus, root string) {
	s.t.Helper()
	qs, err := monitoringkit.DashboardQueries(root, map[string]string{"namespace": s.ns, "__rate_interval": "1m"})
	s.must(err)
	if len(qs) == 0 {
		s.t.Fatal("the dashboard holds no queries")
	}
	s.wait(monitoringTimeout, "every dashboard query to return series", func(ctx context.Context) (bool, string, error) {
		var empty []string
		for _, q := range qs {
			v, err := prom.vector(ctx, q.Expr)
			switch {
			case err != nil:
				empty = append(empty, fmt.Sprintf("%q: %s: %v", q.Panel, q.Expr, err))
			case len(v) == 0:
				empty = append(empty, fmt.Sprintf("%q: %s: no series", q.Panel, q.Expr))
			}
		}
		return len(empty) == 0, strings.Join(empty, "\n"), nil
	})
	s.t.Logf("all %d dashboard queries return series", len(qs))
}

// checkAlerts: every alert expression parses; every selector in it returns
// series (an alert silent while healthy still reads real series); the
// alerts this scenario provoked are pending or firing for it; every rule
// evaluates with health ok.
func (s *scenario) checkAlerts(prom kitPrometheus, root string) {
	s.t.Helper()
	pr, _, err := monitoringkit.Rules(root)
	s.must(err)
	var selectors []string
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			sels, err := prom.selectors(s.ctx, r.Expr)
			if err != nil {
				s.t.Errorf("alert %s: %v", r.Alert, err)
				continue
			}
			if len(sels) == 0 {
				s.t.Errorf("alert %s reads no series: %s", r.Alert, r.Expr)
			}
			selectors = append(selectors, sels...)
		}
	}
	s.wait(monitoringTimeout, "every selector of every alert to return series", func(ctx context.Context) (bool, string, error) {
		var empty []string
		for _, sel := range selectors {
			if v, err := prom.vector(ctx, sel); err != nil || len(v) == 0 {
				empty = append(empty, fmt.Sprintf("%s: %d series (%v)", sel, len(v), err))
			}
		}
		return len(empty) == 0, strings.Join(empty, "\n"), nil
	})

	provoked := map[string]model.LabelSet{
		"FireboltEngineDrainCheckFailing": {"namespace": model.LabelValue(s.ns), "name": "demo", "instance": "demo"},
		"CrossplaneCircuitBreakerOpen":    {"controller": "composite/xfireboltengines.compute.firebolt.io"},
	}
	s.t.Logf("all %d selectors of the kit's alerts return series", len(selectors))
	s.wait(monitoringTimeout, "the provoked alerts pending or firing", func(ctx context.Context) (bool, string, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		res, err := prom.api.Alerts(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		var missing []string
		for name, labels := range provoked {
			found := false
			for _, a := range res.Alerts {
				if string(a.Labels[model.AlertNameLabel]) != name {
					continue
				}
				matches := true
				for k, v := range labels {
					matches = matches && a.Labels[k] == v
				}
				found = found || matches
			}
			if !found {
				missing = append(missing, name+labels.String())
			}
		}
		return len(missing) == 0, "not active: " + strings.Join(missing, ", "), nil
	})

	s.wait(monitoringTimeout, "every rule evaluated with health ok", func(ctx context.Context) (bool, string, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		res, err := prom.api.Rules(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		var bad []string
		n := 0
		for _, g := range res.Groups {
			for _, r := range g.Rules {
				a, ok := r.(promv1.AlertingRule)
				if !ok {
					bad = append(bad, fmt.Sprintf("group %s holds a %T", g.Name, r))
					continue
				}
				n++
				if a.Health != promv1.RuleHealthGood {
					bad = append(bad, fmt.Sprintf("%s: health %q %s", a.Name, a.Health, a.LastError))
				}
			}
		}
		want := 0
		for _, g := range pr.Spec.Groups {
			want += len(g.Rules)
		}
		if n != want {
			bad = append(bad, fmt.Sprintf("%d rules loaded, the kit has %d", n, want))
		}
		return len(bad) == 0, strings.Join(bad, "; "), nil
	})
	s.t.Logf("the provoked alerts are active and every rule evaluates with health ok")
}

// selectors parses expr with the server's PromQL parser (/api/v1/parse_query)
// and returns every series selector in it, as an instant vector selector.
func (p kitPrometheus) selectors(ctx context.Context, expr string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+"/api/v1/parse_query?query="+url.QueryEscape(expr), nil)
	if err != nil {
		return nil, err
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer rsp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   any    `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(rsp.Body, 1<<20)).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("does not parse: %s", body.Error)
	}
	var out []string
	var walk func(any)
	walk = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			if t := n["type"]; t == "vectorSelector" || t == "matrixSelector" {
				ms, _ := n["matchers"].([]any)
				parts := make([]string, 0, len(ms))
				for _, m := range ms {
					mm, _ := m.(map[string]any)
					parts = append(parts, fmt.Sprintf("%s%s%q", mm["name"], mm["type"], mm["value"]))
				}
				out = append(out, "{"+strings.Join(parts, ", ")+"}")
				return
			}
			for _, v := range n {
				walk(v)
			}
		case []any:
			for _, v := range n {
				walk(v)
			}
		}
	}
	walk(body.Data)
	return out, nil
}
