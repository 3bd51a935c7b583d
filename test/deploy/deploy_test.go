// Package deploy checks the manifests in deploy/ that a Configuration package
// cannot carry, decoded strictly into Crossplane's own API types.
package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	pkgv1beta1 "github.com/crossplane/crossplane/apis/v2/pkg/v1beta1"
)

// The function's Deployment reserves what it needs and is bounded in memory,
// so one cluster's busy drain checks cannot take a node down with it.
func TestFunctionRuntimeHasResources(t *testing.T) {
	b, err := os.ReadFile("../../deploy/function-runtime.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rc *pkgv1beta1.DeploymentRuntimeConfig
	docs := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		raw, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Kind != "DeploymentRuntimeConfig" {
			continue
		}
		rc = &pkgv1beta1.DeploymentRuntimeConfig{}
		if err := yaml.UnmarshalStrict(raw, rc); err != nil {
			t.Fatalf("DeploymentRuntimeConfig does not decode strictly: %v", err)
		}
	}
	if rc == nil || rc.Spec.DeploymentTemplate == nil || rc.Spec.DeploymentTemplate.Spec == nil {
		t.Fatal("deploy/function-runtime.yaml has no DeploymentRuntimeConfig with a deployment template")
	}
	var runtime *corev1.Container
	for i, c := range rc.Spec.DeploymentTemplate.Spec.Template.Spec.Containers {
		if c.Name == "package-runtime" {
			runtime = &rc.Spec.DeploymentTemplate.Spec.Template.Spec.Containers[i]
		}
	}
	if runtime == nil {
		t.Fatal("no package-runtime container: Crossplane would not apply its settings to the function")
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := runtime.Resources.Requests[r]; !ok || q.IsZero() {
			t.Errorf("package-runtime requests no %s", r)
		}
	}
	req, lim := runtime.Resources.Requests[corev1.ResourceMemory], runtime.Resources.Limits[corev1.ResourceMemory]
	if lim.IsZero() {
		t.Error("package-runtime has no memory limit")
	} else if lim.Cmp(req) < 0 {
		t.Errorf("memory limit %s is below the request %s", lim.String(), req.String())
	}
}
