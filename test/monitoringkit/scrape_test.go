package monitoringkit

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestScrapeConfigs: a PodMonitor becomes the kubernetes_sd job the
// Prometheus Operator derives: keep the selected pods' named port, label
// the target, honour the endpoint's labels and relabelings.
func TestScrapeConfigs(t *testing.T) {
	pm := PodMonitor{
		Metadata: Meta{Name: "engines", Namespace: "monitoring"},
		Spec: PodMonitorSpec{
			Selector: metav1.LabelSelector{
				MatchLabels: map[string]string{"app.kubernetes.io/part-of": "firebolt"},
				MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "firebolt.io/engine", Operator: metav1.LabelSelectorOpExists},
					{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a.b", "c"}},
				},
			},
			NamespaceSelector: NamespaceSelector{Any: true},
			PodMetricsEndpoints: []PodMetricsEndpoint{{
				Port: "metrics", HonorLabels: true, Interval: "30s",
				Relabelings: []Relabeling{{SourceLabels: []string{"__meta_kubernetes_pod_label_firebolt_io_engine"}, TargetLabel: "engine"}},
			}},
		},
	}
	// The job, but for its interval and its namespaces.
	job := `- job_name: "podMonitor/monitoring/engines/0"
  honor_labels: true
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  metrics_path: "/metrics"
  kubernetes_sd_configs:
  - role: pod
    kubeconfig_file: "/k"
%[2]s  relabel_configs:
  - source_labels: ["__meta_kubernetes_pod_labelpresent_app_kubernetes_io_part_of", "__meta_kubernetes_pod_label_app_kubernetes_io_part_of"]
    regex: "true;firebolt"
    action: keep
  - source_labels: ["__meta_kubernetes_pod_labelpresent_firebolt_io_engine"]
    regex: "true"
    action: keep
  - source_labels: ["__meta_kubernetes_pod_labelpresent_tier", "__meta_kubernetes_pod_label_tier"]
    regex: "true;(a\\.b|c)"
    action: keep
  - source_labels: ["__meta_kubernetes_pod_container_port_name"]
    regex: "metrics"
    action: keep
  - source_labels: ["__meta_kubernetes_pod_phase"]
    regex: "(Failed|Succeeded)"
    action: drop
  - source_labels: ["__meta_kubernetes_namespace"]
    action: replace
    target_label: "namespace"
  - source_labels: ["__meta_kubernetes_pod_container_name"]
    action: replace
    target_label: "container"
  - source_labels: ["__meta_kubernetes_pod_name"]
    action: replace
    target_label: "pod"
  - source_labels: ["__meta_kubernetes_pod_container_port_name"]
    action: replace
    target_label: "endpoint"
  - source_labels: ["__meta_kubernetes_namespace"]
    regex: "(.*)"
    action: replace
    target_label: "job"
    replacement: "monitoring/engines"
  - source_labels: ["__meta_kubernetes_pod_label_firebolt_io_engine"]
    action: replace
    target_label: "engine"
`
	cases := map[string]struct {
		namespaces []string
		interval   string
		want       string
	}{
		"AnyNamespace": {want: fmt.Sprintf(job, "30s", "")},
		"OneNamespaceFaster": {namespaces: []string{"s1"}, interval: "1s",
			want: fmt.Sprintf(job, "1s", "    namespaces:\n      names: [\"s1\"]\n")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := pm.ScrapeConfigs("/k", tc.namespaces, tc.interval)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scrape configs (-want +got):\n%s", diff)
			}
		})
	}
}

// A selector the derivation cannot express is refused, not dropped.
func TestScrapeConfigsRefusesNotIn(t *testing.T) {
	pm := PodMonitor{Metadata: Meta{Name: "x", Namespace: "m"}, Spec: PodMonitorSpec{
		Selector:            metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"v"}}}},
		PodMetricsEndpoints: []PodMetricsEndpoint{{Port: "metrics"}},
	}}
	if _, err := pm.ScrapeConfigs("/k", nil, ""); err == nil {
		t.Error("a NotIn selector was derived; want it refused")
	}
}
