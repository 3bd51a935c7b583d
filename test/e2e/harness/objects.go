package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// ApplyFiles server-side applies every object of each path, as `kubectl
// apply -n NAMESPACE -f PATH` would: a directory's .yaml, .yml and .json files
// (not its subdirectories) in name order, each file's objects in order, and
// namespace given to a namespaced object that names none.
func (c *Cluster) ApplyFiles(ctx context.Context, namespace string, paths ...string) error {
	files, err := manifestFiles(paths)
	if err != nil {
		return err
	}
	for _, f := range files {
		objs, err := ReadObjects(f)
		if err != nil {
			return err
		}
		for _, u := range objs {
			if u.GetNamespace() == "" && namespace != "" {
				namespaced, err := c.namespaced(u.GroupVersionKind())
				if err != nil {
					return errors.Wrapf(err, "cannot apply %s", f)
				}
				if namespaced {
					u.SetNamespace(namespace)
				}
			}
			if _, err := c.Apply(ctx, u); err != nil {
				return errors.Wrapf(err, "cannot apply %s", f)
			}
		}
	}
	return nil
}

// manifestFiles are the files `kubectl apply -f` reads for paths: a file
// itself, a directory's .yaml, .yml and .json files in name order.
func manifestFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot apply %s", p)
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot read %s", p)
		}
		for _, e := range entries {
			switch filepath.Ext(e.Name()) {
			case ".yaml", ".yml", ".json":
				if !e.IsDir() {
					files = append(files, filepath.Join(p, e.Name()))
				}
			}
		}
	}
	return files, nil
}

// Table is what `kubectl get` prints for the kind's objects in namespace:
// the API server's table of them (the printer columns kubectl shows without
// -o wide), one map per row from upper-cased column name to cell.
func (c *Cluster) Table(ctx context.Context, gvk schema.GroupVersionKind, namespace string) ([]map[string]string, error) {
	t, err := c.table(ctx, gvk, namespace)
	if err != nil {
		return nil, err
	}
	rows := make([]map[string]string, 0, len(t.Rows))
	for _, r := range t.Rows {
		row := map[string]string{}
		for i, col := range t.ColumnDefinitions {
			if col.Priority == 0 && i < len(r.Cells) {
				row[columnName(col)] = cell(r.Cells[i])
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// table is the API server's table of the kind's objects in namespace (or of
// every namespace when it is empty), each row with its object's metadata:
// the request kubectl get makes.
func (c *Cluster) table(ctx context.Context, gvk schema.GroupVersionKind, namespace string) (*metav1.Table, error) {
	m, err := c.mapping(gvk)
	if err != nil {
		return nil, err
	}
	path := "/apis/" + m.Resource.Group + "/" + m.Resource.Version
	if m.Resource.Group == "" {
		path = "/api/" + m.Resource.Version
	}
	if namespace != "" && m.Scope.Name() == meta.RESTScopeNameNamespace {
		path += "/namespaces/" + namespace
	}
	b, err := c.Kube.CoreV1().RESTClient().Get().AbsPath(path, m.Resource.Resource).Param("includeObject", "Metadata").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot get the table of %s", m.Resource.Resource)
	}
	t := &metav1.Table{}
	return t, errors.Wrapf(json.Unmarshal(b, t), "cannot decode the table of %s", m.Resource.Resource)
}

// tableText renders a table as kubectl get -o wide --show-labels would,
// one tab-separated line per row, for failure output.
func tableText(t *metav1.Table) string {
	var b strings.Builder
	for _, col := range t.ColumnDefinitions {
		b.WriteString(columnName(col) + "\t")
	}
	b.WriteString("LABELS\n")
	for _, r := range t.Rows {
		for i := range t.ColumnDefinitions {
			if i < len(r.Cells) {
				b.WriteString(cell(r.Cells[i]))
			}
			b.WriteString("\t")
		}
		var m metav1.PartialObjectMetadata
		if len(r.Object.Raw) > 0 && json.Unmarshal(r.Object.Raw, &m) == nil {
			b.WriteString(labels.FormatLabels(m.Labels))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// columnName is a column's header as kubectl prints it.
func columnName(col metav1.TableColumnDefinition) string {
	return strings.ToUpper(strings.ReplaceAll(col.Name, " ", "-"))
}

func cell(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}
