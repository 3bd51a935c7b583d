package harness

import (
	"context"
	"fmt"
	"os"
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
	dir := c.path("prometheus-" + ns)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, errors.Wrapf(err, "cannot create %s", dir)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  evaluation_interval: %[1]s
scrape_configs:
- job_name: pods
  kubernetes_sd_configs:
  - role: pod
    kubeconfig_file: %[2]q
    namespaces:
      names: [%[3]q]
  relabel_configs:
  - source_labels: [__meta_kubernetes_pod_ip]
    regex: (.+)
    target_label: __address__
    replacement: ${1}:%[4]d
  - source_labels: [__meta_kubernetes_namespace]
    target_label: namespace
  - source_labels: [__meta_kubernetes_pod_name]
    target_label: pod
`, ScrapeInterval, c.Kubeconfig, ns, MetricsPort)
	cfg := dir + "/prometheus.yml"
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		return nil, errors.Wrap(err, "cannot write the Prometheus config")
	}
	p := &Process{
		Name: "prometheus-" + ns,
		Path: c.Tools.Prometheus,
		Args: []string{"--config.file=" + cfg, "--storage.tsdb.path=" + dir + "/data", "--web.listen-address=" + address,
			"--storage.tsdb.retention.time=1h", "--log.level=info"},
		Log: c.path("logs", "prometheus-"+ns+".log"),
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
