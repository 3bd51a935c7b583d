package harness

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
)

// ScrapeInterval is how often the scenario's Prometheus scrapes the fake
// pods: short, so a check sees a change of the fakes within seconds.
const ScrapeInterval = time.Second

// StartPrometheus runs a Prometheus server for one scenario: it discovers
// the pods of namespace ns through the API server (kubernetes_sd, with the
// admin kubeconfig), scrapes each fake pod's metrics on MetricsPort every
// ScrapeInterval and serves its HTTP API on address. Each scrape gets the
// pod's namespace and name as labels, so a check's query can select the
// pods of one StatefulSet. Like the wake agent, it is the scenario's own:
// stopping it (the caller's job) fails no other scenario.
func (c *Cluster) StartPrometheus(ctx context.Context, ns, address string) (*Process, error) {
	return c.StartPrometheusWith(ctx, "prometheus-"+ns, address, PrometheusConfig{ScrapeConfigs: fmt.Sprintf(`- job_name: pods
  kubernetes_sd_configs:
  - role: pod
    kubeconfig_file: %[1]q
    namespaces:
      names: [%[2]q]
  relabel_configs:
  - source_labels: [__meta_kubernetes_pod_ip]
    regex: (.+)
    target_label: __address__
    replacement: ${1}:%[3]d
  - source_labels: [__meta_kubernetes_namespace]
    target_label: namespace
  - source_labels: [__meta_kubernetes_pod_name]
    target_label: pod
`, c.Kubeconfig, ns, MetricsPort)})
}

// PrometheusConfig is what a scenario's Prometheus scrapes and evaluates.
type PrometheusConfig struct {
	// ScrapeConfigs is the YAML of the scrape_configs list's items. A
	// kubernetes_sd_configs entry may use c.Kubeconfig (the admin's).
	ScrapeConfigs string
	// RuleFiles are rule files to load, evaluated every ScrapeInterval.
	RuleFiles []string
}

// StartPrometheusWith runs a Prometheus server named name (its data,
// config and log are named after it) with cfg, serving its HTTP API on
// address, and waits until it is ready. Every scrape and rule evaluation
// runs every ScrapeInterval. The caller stops it.
func (c *Cluster) StartPrometheusWith(ctx context.Context, name, address string, cfg PrometheusConfig) (*Process, error) {
	dir := c.path(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, errors.Wrapf(err, "cannot create %s", dir)
	}
	var rules strings.Builder
	if len(cfg.RuleFiles) > 0 {
		rules.WriteString("rule_files:\n")
		for _, f := range cfg.RuleFiles {
			fmt.Fprintf(&rules, "- %q\n", f)
		}
	}
	config := fmt.Sprintf(`global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  evaluation_interval: %[1]s
%[2]sscrape_configs:
%[3]s`, ScrapeInterval, rules.String(), cfg.ScrapeConfigs)
	file := dir + "/prometheus.yml"
	if err := os.WriteFile(file, []byte(config), 0o644); err != nil {
		return nil, errors.Wrap(err, "cannot write the Prometheus config")
	}
	p := &Process{
		Name: name,
		Path: c.Tools.Prometheus,
		Args: []string{"--config.file=" + file, "--storage.tsdb.path=" + dir + "/data", "--web.listen-address=" + address,
			"--storage.tsdb.retention.time=1h", "--log.level=info"},
		Log: c.path("logs", name+".log"),
	}
	if err := p.Start(); err != nil {
		return nil, err
	}
	err := c.waitHTTP(ctx, "Prometheus ready on "+address, "http://"+address+"/-/ready", nil, p)
	if err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}
