package engine

import (
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// ConfigKey is the ConfigMap key the engine reads its configuration from.
const ConfigKey = "config.yaml"

// terminationGraceMargin is how much sooner than the pod's grace period the
// engine stops waiting for in-flight queries, so it exits before SIGKILL.
const terminationGraceMargin = 5

// ownedConfigPaths are the config.yaml paths the operator renders; a user's
// customEngineConfig never overrides them (the original's
// OperatorOwnedEngineConfigPaths).
var ownedConfigPaths = map[string][]string{
	"":         {"schema_version", "endpoints"},
	"instance": {"id", "type", "multi_engine", "auth"},
	"engine":   {"id", "nodes", "termination_grace_period"},
}

// customConfig decodes a customEngineConfig and drops the operator-owned
// paths. Anything that is not a JSON object contributes nothing, as in the
// original; the schema only admits objects anyway.
func customConfig(raw *runtime.RawExtension) map[string]any {
	if raw == nil || len(raw.Raw) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw.Raw, &m); err != nil || m == nil {
		return nil
	}
	for _, k := range ownedConfigPaths[""] {
		delete(m, k)
	}
	for _, section := range []string{"instance", "engine"} {
		v, ok := m[section]
		if !ok {
			continue
		}
		sub, isObj := v.(map[string]any)
		if !isObj {
			delete(m, section)
			continue
		}
		for _, k := range ownedConfigPaths[section] {
			delete(sub, k)
		}
		if len(sub) == 0 {
			delete(m, section)
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// effectiveCustomConfig is the class's customEngineConfig with the engine's
// deep-merged over it, owned paths dropped; nil when empty.
func effectiveCustomConfig(spec v1alpha1.FireboltEngineSpec, class *v1alpha1.FireboltEngineClassSpec) map[string]any {
	var out map[string]any
	if class != nil {
		out = customConfig(class.CustomEngineConfig)
	}
	if e := customConfig(spec.CustomEngineConfig); e != nil {
		if out == nil {
			out = map[string]any{}
		}
		deepMerge(out, e)
	}
	return out
}

// deepMerge merges src into dst: objects recurse, anything else replaces.
func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				deepMerge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// engineConfig is the content of config.yaml: the operator's base with the
// effective custom config merged at the root.
func engineConfig(r renderInput) map[string]any {
	nodes := make([]any, 0, r.Spec.Replicas)
	for i := range int(r.Spec.Replicas) {
		host := fmt.Sprintf("%s-%d.%s", statefulSetName(r.Engine, r.Gen), i, contract.ServiceHost(headlessName(r.Engine, r.Gen), r.Namespace))
		nodes = append(nodes, map[string]any{"host": host})
	}
	cfg := map[string]any{
		"schema_version": "1.0",
		"instance": map[string]any{
			"id":   r.InstanceID,
			"type": "multi_engine",
			"multi_engine": map[string]any{
				"metadata_endpoint": r.MetadataEndpoint,
			},
		},
		"engine": map[string]any{
			"id":                       r.Engine,
			"nodes":                    nodes,
			"termination_grace_period": strconv.Itoa(terminationGracePeriodSeconds-terminationGraceMargin) + "s",
		},
		"logging": map[string]any{"format": "json"},
	}
	if r.Auth != nil {
		// instance.auth is operator-owned: customConfig strips it, so the
		// merge below cannot touch it.
		cfg["instance"].(map[string]any)["auth"] = r.Auth.Config()
	}
	if r.TLS != nil {
		// endpoints is operator-owned too: the listener below is the only
		// one on the query port, whatever the custom config says.
		cfg["endpoints"] = map[string]any{"http": map[string]any{"listeners": engineTLSListeners()}}
	}
	if r.CustomConfig != nil {
		deepMerge(cfg, runtime.DeepCopyJSON(r.CustomConfig))
	}
	return cfg
}

// renderConfigMap builds the generation's ConfigMap.
func renderConfigMap(r renderInput) *corev1.ConfigMap {
	b, err := yaml.Marshal(engineConfig(r))
	if err != nil {
		panic("engine: cannot encode config.yaml: " + err.Error())
	}
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kindConfigMap},
		ObjectMeta: metav1.ObjectMeta{
			Name:      configMapName(r.Engine, r.Gen),
			Namespace: r.Namespace,
			Labels:    generationLabels(r.Engine, r.Gen),
		},
		Data: map[string]string{ConfigKey: string(b)},
	}
}
