package v1alpha1

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jsonFields maps the JSON field names of struct type t to how the
// original would recognise a set value of each.
func jsonFields(t reflect.Type) map[string]fieldKind {
	out := map[string]fieldKind{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		switch f.Type.Kind() {
		case reflect.String:
			out[name] = fieldString
		case reflect.Bool:
			out[name] = fieldBool
		case reflect.Slice:
			out[name] = fieldList
		default:
			// Other kinds count as pointers: set when present.
			out[name] = fieldPointer
		}
	}
	return out
}

// TestFieldListsMatchKubernetes keeps the hand-written field lists in step
// with k8s.io/api: a new Container field must be classified, and every
// kind must match the Go type the original checks.
func TestFieldListsMatchKubernetes(t *testing.T) {
	t.Run("ContainerFields", func(t *testing.T) {
		got := map[string]fieldKind{}
		for _, c := range containerFields {
			got[c.name] = c.kind
		}
		if diff := cmp.Diff(jsonFields(reflect.TypeFor[corev1.Container]()), got); diff != "" {
			t.Errorf("containerFields: -corev1.Container, +list:\n%s", diff)
		}
	})
	t.Run("PodSpecFields", func(t *testing.T) {
		all := jsonFields(reflect.TypeFor[corev1.PodSpec]())
		want := map[string]fieldKind{}
		for _, f := range ForbiddenPodSpecFields {
			want[f] = all[f]
		}
		if diff := cmp.Diff(want, podSpecFieldKinds); diff != "" {
			t.Errorf("podSpecFieldKinds: -corev1.PodSpec, +list:\n%s", diff)
		}
	})
	t.Run("ObjectMetaFields", func(t *testing.T) {
		fields := jsonFields(reflect.TypeFor[metav1.ObjectMeta]())
		want := make([]string, 0, len(fields))
		for f := range fields {
			want = append(want, f)
		}
		got := append([]string{"labels", "annotations"}, ForbiddenTemplateMetadataFields...)
		sort.Strings(want)
		sort.Strings(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("labels, annotations and ForbiddenTemplateMetadataFields: -metav1.ObjectMeta, +list:\n%s", diff)
		}
	})
}

func TestRules(t *testing.T) {
	cases := map[string]struct {
		reason string
		site   TemplateSite
		at     string
		want   []TemplateRule
	}{
		"RestrictedPrimary": {
			reason: "A restricted primary may set only name, image, imagePullPolicy and resources.",
			site:   TemplateSite{Path: "spec.p.template", Primary: "p", Restricted: true},
			at:     "spec.containers",
			want: func() []TemplateRule {
				var rs []TemplateRule
				for _, f := range []struct{ name, set string }{
					{"command", "has(c.command) && size(c.command) > 0"},
					{"args", "has(c.args) && size(c.args) > 0"},
					{"workingDir", "has(c.workingDir) && c.workingDir != ''"},
					{"ports", "has(c.ports) && size(c.ports) > 0"},
					{"envFrom", "has(c.envFrom) && size(c.envFrom) > 0"},
					{"env", "has(c.env) && size(c.env) > 0"},
					{"resizePolicy", "has(c.resizePolicy) && size(c.resizePolicy) > 0"},
					{"restartPolicy", "has(c.restartPolicy)"},
					{"restartPolicyRules", "has(c.restartPolicyRules) && size(c.restartPolicyRules) > 0"},
					{"volumeMounts", "has(c.volumeMounts) && size(c.volumeMounts) > 0"},
					{"volumeDevices", "has(c.volumeDevices) && size(c.volumeDevices) > 0"},
					{"livenessProbe", "has(c.livenessProbe)"},
					{"readinessProbe", "has(c.readinessProbe)"},
					{"startupProbe", "has(c.startupProbe)"},
					{"lifecycle", "has(c.lifecycle)"},
					{"terminationMessagePath", "has(c.terminationMessagePath) && c.terminationMessagePath != ''"},
					{"terminationMessagePolicy", "has(c.terminationMessagePolicy) && c.terminationMessagePolicy != ''"},
					{"securityContext", "has(c.securityContext)"},
					{"stdin", "has(c.stdin) && c.stdin"},
					{"stdinOnce", "has(c.stdinOnce) && c.stdinOnce"},
					{"tty", "has(c.tty) && c.tty"},
				} {
					rs = append(rs, TemplateRule{
						At: "spec.containers", Rule: "self.all(c, c.name != 'p' || !(" + f.set + "))",
						Message: "spec.p.template.spec.containers[p]." + f.name + " is operator-owned and must not be set",
					})
				}
				return append(rs, TemplateRule{
					At: "spec.containers", Rule: "self.filter(c, c.name == 'p').size() <= 1",
					Message: "spec.p.template.spec.containers: container p may appear only once",
				})
			}(),
		},
		"ReservedNames": {
			reason: "Reserved names are rejected on containers and init containers; the primary's name on init containers.",
			site:   TemplateSite{Path: "spec.template", Primary: "engine", ReservedContainers: []string{"engine-web"}},
			at:     "spec.initContainers",
			want: []TemplateRule{
				{At: "spec.initContainers", Rule: "self.all(c, c.name != 'engine')", Message: "spec.template.spec.initContainers: name engine is the primary container's and must not be used"},
				{At: "spec.initContainers", Rule: "self.all(c, c.name != 'engine-web')", Message: "spec.template.spec.initContainers: name engine-web is reserved for the operator's container"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []TemplateRule
			for _, r := range tc.site.OwnedRules() {
				if r.At == tc.at {
					got = append(got, r)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nOwnedRules() at %s: -want, +got:\n%s", tc.reason, tc.at, diff)
			}
		})
	}
}
