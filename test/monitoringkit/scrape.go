package monitoringkit

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/errors"
)

// ScrapeConfigs is the Prometheus scrape configuration the Prometheus
// Operator derives from the PodMonitor, one job per endpoint, as the items
// of a scrape_configs list (YAML). Pods are discovered through the API
// server with kubeconfig; within namespaces when it is not empty (a test
// keeps to its own), else where the PodMonitor says. interval, when set,
// replaces the endpoints' scrape interval (a test scrapes faster).
//
// What the operator's derivation does, and this one too: keep the pods
// whose labels match the selector and the containers' ports named as the
// endpoint's port; drop pods that have finished; label every target with
// its namespace, pod, container and endpoint (the port's name) and the job
// <namespace>/<name>; honour the endpoint's labels when honorLabels is set;
// then apply the endpoint's relabelings.
func (pm PodMonitor) ScrapeConfigs(kubeconfig string, namespaces []string, interval string) (string, error) {
	keep, err := selectorRelabelings(pm.Spec.Selector)
	if err != nil {
		return "", errors.Wrapf(err, "PodMonitor %s", pm.Metadata.Name)
	}
	if len(namespaces) == 0 {
		switch {
		case pm.Spec.NamespaceSelector.Any:
		case len(pm.Spec.NamespaceSelector.MatchNames) > 0:
			namespaces = pm.Spec.NamespaceSelector.MatchNames
		default:
			namespaces = []string{pm.Metadata.Namespace}
		}
	}
	var b strings.Builder
	for i, ep := range pm.Spec.PodMetricsEndpoints {
		if ep.Port == "" {
			return "", errors.Errorf("PodMonitor %s endpoint %d names no port", pm.Metadata.Name, i)
		}
		job := pm.Metadata.Namespace + "/" + pm.Metadata.Name
		fmt.Fprintf(&b, "- job_name: %q\n", fmt.Sprintf("podMonitor/%s/%d", job, i))
		fmt.Fprintf(&b, "  honor_labels: %t\n", ep.HonorLabels)
		if iv := first(interval, ep.Interval); iv != "" {
			fmt.Fprintf(&b, "  scrape_interval: %s\n  scrape_timeout: %s\n", iv, iv)
		}
		fmt.Fprintf(&b, "  metrics_path: %q\n", first(ep.Path, "/metrics"))
		fmt.Fprintf(&b, "  kubernetes_sd_configs:\n  - role: pod\n    kubeconfig_file: %q\n", kubeconfig)
		if len(namespaces) > 0 {
			fmt.Fprintf(&b, "    namespaces:\n      names: [%s]\n", quoted(namespaces))
		}
		b.WriteString("  relabel_configs:\n")
		rule := func(source []string, regex, action, target, replacement string) {
			fmt.Fprintf(&b, "  - source_labels: [%s]\n", quoted(source))
			if regex != "" {
				fmt.Fprintf(&b, "    regex: %q\n", regex)
			}
			fmt.Fprintf(&b, "    action: %s\n", action)
			if target != "" {
				fmt.Fprintf(&b, "    target_label: %q\n", target)
			}
			if replacement != "" {
				fmt.Fprintf(&b, "    replacement: %q\n", replacement)
			}
		}
		for _, k := range keep {
			rule(k.source, k.regex, "keep", "", "")
		}
		rule([]string{"__meta_kubernetes_pod_container_port_name"}, regexp.QuoteMeta(ep.Port), "keep", "", "")
		rule([]string{"__meta_kubernetes_pod_phase"}, "(Failed|Succeeded)", "drop", "", "")
		rule([]string{"__meta_kubernetes_namespace"}, "", "replace", "namespace", "")
		rule([]string{"__meta_kubernetes_pod_container_name"}, "", "replace", "container", "")
		rule([]string{"__meta_kubernetes_pod_name"}, "", "replace", "pod", "")
		rule([]string{"__meta_kubernetes_pod_container_port_name"}, "", "replace", "endpoint", "")
		rule([]string{"__meta_kubernetes_namespace"}, "(.*)", "replace", "job", job)
		for _, r := range ep.Relabelings {
			if len(r.SourceLabels) == 0 || r.TargetLabel == "" {
				return "", errors.Errorf("PodMonitor %s endpoint %d: a relabeling needs sourceLabels and targetLabel", pm.Metadata.Name, i)
			}
			rule(r.SourceLabels, "", "replace", r.TargetLabel, "")
		}
	}
	return b.String(), nil
}

type keepRule struct {
	source []string
	regex  string
}

// selectorRelabelings keeps the pods a label selector selects.
func selectorRelabelings(s metav1.LabelSelector) ([]keepRule, error) {
	var out []keepRule
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, keepRule{source: []string{present(k), label(k)}, regex: "true;" + regexp.QuoteMeta(s.MatchLabels[k])})
	}
	for _, e := range s.MatchExpressions {
		values := make([]string, len(e.Values))
		for i, v := range e.Values {
			values[i] = regexp.QuoteMeta(v)
		}
		switch e.Operator {
		case metav1.LabelSelectorOpExists:
			out = append(out, keepRule{source: []string{present(e.Key)}, regex: "true"})
		case metav1.LabelSelectorOpDoesNotExist:
			out = append(out, keepRule{source: []string{present(e.Key)}, regex: "|false"})
		case metav1.LabelSelectorOpIn:
			out = append(out, keepRule{source: []string{present(e.Key), label(e.Key)}, regex: "true;(" + strings.Join(values, "|") + ")"})
		default:
			return nil, errors.Errorf("selector operator %s is not one this kit derives", e.Operator)
		}
	}
	return out, nil
}

var unsafe = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// label and present are the discovery labels of a pod label's value and
// presence, its name made a Prometheus label name.
func label(k string) string { return "__meta_kubernetes_pod_label_" + unsafe.ReplaceAllString(k, "_") }
func present(k string) string {
	return "__meta_kubernetes_pod_labelpresent_" + unsafe.ReplaceAllString(k, "_")
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func quoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
