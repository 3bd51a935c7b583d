package harness

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/errors"
)

// FieldManager is the server-side apply field manager of what the tests and
// `make up` apply, as a user's kubectl would.
const FieldManager = "e2e-user"

// Apply server-side applies u, forcing ownership of the fields it sets: the
// tests change claims the way `kubectl apply --server-side` would.
func (c *Cluster) Apply(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := c.ResourceFor(u)
	if err != nil {
		return nil, err
	}
	u = u.DeepCopy()
	u.SetManagedFields(nil)
	u.SetResourceVersion("")
	out, err := ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return out, errors.Wrapf(err, "cannot apply %s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
}

// Get reads the current state of the object u names.
func (c *Cluster) Get(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := c.ResourceFor(u)
	if err != nil {
		return nil, err
	}
	return ri.Get(ctx, u.GetName(), metav1.GetOptions{})
}

// Delete deletes the object u names, in the foreground like kubectl.
func (c *Cluster) Delete(ctx context.Context, u *unstructured.Unstructured) error {
	ri, err := c.ResourceFor(u)
	if err != nil {
		return err
	}
	fg := metav1.DeletePropagationForeground
	return ri.Delete(ctx, u.GetName(), metav1.DeleteOptions{PropagationPolicy: &fg})
}

// ReadObjects decodes every object in a YAML file.
func ReadObjects(path string) ([]*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot read %s", path)
	}
	return DecodeObjects(b)
}

// DecodeObjects decodes every object in a YAML stream.
func DecodeObjects(b []byte) ([]*unstructured.Unstructured, error) {
	d := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []*unstructured.Unstructured
	for {
		m := map[string]any{}
		if err := d.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, errors.Wrap(err, "cannot decode YAML")
		}
		if len(m) > 0 {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

// ToYAML renders objects without their managed fields, for failure output.
func ToYAML(objs ...*unstructured.Unstructured) string {
	var b strings.Builder
	for _, u := range objs {
		u = u.DeepCopy()
		u.SetManagedFields(nil)
		y, err := sigsyaml.Marshal(u.Object)
		if err != nil {
			b.WriteString("(cannot render: " + err.Error() + ")\n")
			continue
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.String()
}

// Kubectl runs the kubectl the harness built, as the admin user.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := commandContext(ctx, c.Tools.Kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	out, err := cmd.CombinedOutput()
	return string(out), errors.Wrapf(err, "kubectl %s", strings.Join(args, " "))
}
