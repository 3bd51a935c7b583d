package kubectlfirebolt

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/errors"
)

// Output formats.
const (
	outTable = "table"
	outWide  = "wide"
	outJSON  = "json"
	outYAML  = "yaml"
	outName  = "name"
)

// writeTable prints a header and rows in aligned columns, as kubectl does.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	return writeTableIndent(w, "", header, rows)
}

// writeTableIndent is writeTable with every line indented. An empty last
// cell leaves no padding behind.
func writeTableIndent(w io.Writer, indent string, header []string, rows [][]string) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 8, 3, ' ', 0)
	for _, r := range append([][]string{header}, rows...) {
		if _, err := fmt.Fprintln(tw, indent+strings.Join(r, "\t")); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	lines := strings.SplitAfter(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \n")
		if strings.HasSuffix(l, "\n") {
			lines[i] += "\n"
		}
	}
	_, err := io.WriteString(w, strings.Join(lines, ""))
	return err
}

// writeJSON prints v indented, as kubectl -o json does.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return errors.Wrap(err, "cannot encode JSON")
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeYAML prints v as YAML.
func writeYAML(w io.Writer, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return errors.Wrap(err, "cannot encode YAML")
	}
	_, err = w.Write(b)
	return err
}

// writeStructured prints v as JSON or YAML, the format being one of them.
func writeStructured(w io.Writer, format string, v any) error {
	if format == outYAML {
		return writeYAML(w, v)
	}
	return writeJSON(w, v)
}

// listing is what a list command prints.
type listing struct {
	// kind names the objects in -o name: fireboltengine/<name>.
	kind  string
	items []unstructured.Unstructured
	// header and row are the table's columns; wide ones extend them.
	header, wideHeader []string
	row                func(u unstructured.Unstructured) (row, wide []string, err error)
}

// print prints the listing in format: a table, a List of the full objects
// (json, yaml), or kind/name lines.
func (l listing) print(e *Env, namespace string) error {
	switch e.Globals.Output {
	case outJSON, outYAML:
		items := make([]any, 0, len(l.items))
		for _, u := range l.items {
			items = append(items, u.Object)
		}
		return writeStructured(e.Out, e.Globals.Output, map[string]any{
			"apiVersion": "v1", "kind": "List", "items": items,
			"metadata": map[string]any{"resourceVersion": ""},
		})
	case outName:
		for _, u := range l.items {
			if _, err := fmt.Fprintf(e.Out, "%s/%s\n", l.kind, u.GetName()); err != nil {
				return err
			}
		}
		return nil
	}
	if len(l.items) == 0 {
		_, err := fmt.Fprintf(e.Err, "No resources found in %s namespace.\n", namespace)
		return err
	}
	wide := e.Globals.Output == outWide
	header := l.header
	if wide {
		header = append(append([]string(nil), header...), l.wideHeader...)
	}
	rows := make([][]string, 0, len(l.items))
	for _, u := range l.items {
		r, w, err := l.row(u)
		if err != nil {
			return err
		}
		if wide {
			r = append(r, w...)
		}
		rows = append(rows, r)
	}
	return writeTable(e.Out, header, rows)
}

// orDash is s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
