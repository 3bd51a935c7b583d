// Package monitoringkit reads the monitoring kit in deploy/monitoring for
// the tests that check it: the PodMonitors (and the Prometheus scrape
// configuration the Prometheus Operator would derive from them), the
// PrometheusRule's rule groups, and the Grafana dashboard's queries. It
// decodes the Prometheus Operator's kinds strictly into the subset of their
// fields the kit may use, so a field the derivation does not understand
// fails the tests rather than being ignored.
package monitoringkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/errors"
)

// Dir is the kit's directory relative to the repository root.
const Dir = "deploy/monitoring"

// The kit's files.
const (
	PodMonitorsFile = "podmonitors.yaml"
	RulesFile       = "prometheusrule.yaml"
	DashboardFile   = "grafana-dashboard.json"
)

// apiVersion of the Prometheus Operator's kinds.
const apiVersion = "monitoring.coreos.com/v1"

// Meta is the metadata the kit's objects carry.
type Meta struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// PodMonitor is the subset of the Prometheus Operator's PodMonitor the kit
// uses.
type PodMonitor struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   Meta           `json:"metadata"`
	Spec       PodMonitorSpec `json:"spec"`
}

// PodMonitorSpec selects pods and their endpoints.
type PodMonitorSpec struct {
	Selector            metav1.LabelSelector `json:"selector"`
	NamespaceSelector   NamespaceSelector    `json:"namespaceSelector,omitempty"`
	PodMetricsEndpoints []PodMetricsEndpoint `json:"podMetricsEndpoints"`
}

// NamespaceSelector says where the pods are: any namespace, the listed
// ones, or (neither set) the PodMonitor's own.
type NamespaceSelector struct {
	Any        bool     `json:"any,omitempty"`
	MatchNames []string `json:"matchNames,omitempty"`
}

// PodMetricsEndpoint is one named container port to scrape.
type PodMetricsEndpoint struct {
	Port        string       `json:"port"`
	Path        string       `json:"path,omitempty"`
	Interval    string       `json:"interval,omitempty"`
	HonorLabels bool         `json:"honorLabels,omitempty"`
	Relabelings []Relabeling `json:"relabelings,omitempty"`
}

// Relabeling copies a discovered label onto the target (action replace,
// the default, with the default regex and replacement).
type Relabeling struct {
	SourceLabels []string `json:"sourceLabels"`
	TargetLabel  string   `json:"targetLabel"`
}

// PrometheusRule is the subset of the Prometheus Operator's PrometheusRule
// the kit uses; its spec is a Prometheus rule file.
type PrometheusRule struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Meta     `json:"metadata"`
	Spec       RuleSpec `json:"spec"`
}

// RuleSpec is a rule file: groups of rules.
type RuleSpec struct {
	Groups []RuleGroup `json:"groups"`
}

// RuleGroup is one group of rules.
type RuleGroup struct {
	Name  string `json:"name"`
	Rules []Rule `json:"rules"`
}

// Rule is an alerting rule.
type Rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PodMonitors reads the kit's PodMonitors.
func PodMonitors(root string) ([]PodMonitor, error) {
	docs, err := documents(filepath.Join(root, Dir, PodMonitorsFile))
	if err != nil {
		return nil, err
	}
	out := make([]PodMonitor, 0, len(docs))
	for _, d := range docs {
		var pm PodMonitor
		if err := yaml.UnmarshalStrict(d, &pm); err != nil {
			return nil, errors.Wrapf(err, "%s: a PodMonitor must use only the fields this kit understands", PodMonitorsFile)
		}
		if pm.APIVersion != apiVersion || pm.Kind != "PodMonitor" {
			return nil, errors.Errorf("%s: %s %s %q is not a %s PodMonitor", PodMonitorsFile, pm.APIVersion, pm.Kind, pm.Metadata.Name, apiVersion)
		}
		out = append(out, pm)
	}
	return out, nil
}

// Rules reads the kit's PrometheusRule and returns it with its spec as a
// Prometheus rule file (YAML).
func Rules(root string) (PrometheusRule, []byte, error) {
	docs, err := documents(filepath.Join(root, Dir, RulesFile))
	if err != nil {
		return PrometheusRule{}, nil, err
	}
	if len(docs) != 1 {
		return PrometheusRule{}, nil, errors.Errorf("%s holds %d documents, want one PrometheusRule", RulesFile, len(docs))
	}
	var pr PrometheusRule
	if err := yaml.UnmarshalStrict(docs[0], &pr); err != nil {
		return PrometheusRule{}, nil, errors.Wrapf(err, "%s: the PrometheusRule must use only the fields this kit understands", RulesFile)
	}
	if pr.APIVersion != apiVersion || pr.Kind != "PrometheusRule" {
		return PrometheusRule{}, nil, errors.Errorf("%s: %s %s is not a %s PrometheusRule", RulesFile, pr.APIVersion, pr.Kind, apiVersion)
	}
	spec, err := yaml.Marshal(pr.Spec)
	if err != nil {
		return PrometheusRule{}, nil, errors.Wrap(err, "cannot write the rule file")
	}
	return pr, spec, nil
}

// documents splits a YAML file into its non-empty documents.
func documents(path string) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	r := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		d, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, errors.Wrapf(err, "cannot read %s", path)
		}
		if len(bytes.TrimSpace(stripComments(d))) > 0 {
			out = append(out, d)
		}
	}
}

func stripComments(d []byte) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(string(d), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes()
}

// Query is one PromQL query of the dashboard.
type Query struct {
	// Panel is the title of the panel it belongs to.
	Panel string
	Expr  string
}

// DashboardQueries reads the dashboard's panel queries, with its template
// variables replaced by vars ($name and ${name}).
func DashboardQueries(root string, vars map[string]string) ([]Query, error) {
	b, err := os.ReadFile(filepath.Join(root, Dir, DashboardFile))
	if err != nil {
		return nil, err
	}
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, errors.Wrapf(err, "cannot parse %s", DashboardFile)
	}
	var out []Query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				out = append(out, Query{Panel: p.Title, Expr: Substitute(t.Expr, vars)})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out, nil
}

type panel struct {
	Title   string `json:"title"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

// Substitute replaces Grafana variables in expr, longest names first, so
// that $name never eats the start of $namespace.
func Substitute(expr string, vars map[string]string) string {
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, k := range names {
		expr = strings.ReplaceAll(expr, "${"+k+"}", vars[k])
		expr = strings.ReplaceAll(expr, "$"+k, vars[k])
	}
	return expr
}
