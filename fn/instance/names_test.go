package instance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// renderAll renders every object of an instance with the internal
// PostgreSQL, named name, in the longest namespace.
func renderAll(t *testing.T, name string) []*unstructured.Unstructured {
	t.Helper()
	cfg, err := (&v1beta1.Input{}).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	in := Inputs{Claim: name, Namespace: strings.Repeat("n", validation.DNS1123LabelMaxLength), CandidatePassword: "pw"}
	in.XR.Name, in.XR.UID = name+"-x7k2p", "5b7a2a3e-3c1f-4d5e-9a0b-1c2d3e4f5a6b"
	in.Existing.Resolved = true // no Secret or volume claim left from before
	p, err := Compute(in, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The PostgreSQL StatefulSet follows its Secret: compute again with
	// the minted Secret observed to get every object.
	if d, ok := p.Resources[RNPostgresCredentials]; ok {
		secret := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: d.Object}}
		in.Observed = map[resource.Name]*composed.Unstructured{RNPostgresCredentials: secret}
		if p, err = Compute(in, cfg); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]*unstructured.Unstructured, 0, len(p.Resources))
	for _, d := range p.Resources {
		out = append(out, &unstructured.Unstructured{Object: d.Object})
	}
	return out
}

// renamed is objs as an instance named to would have them: every string
// that starts with from (names and label values are the instance name and
// a suffix) starts with to instead.
func renamed(t *testing.T, objs []*unstructured.Unstructured, from, to string) []*unstructured.Unstructured {
	t.Helper()
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		b, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		if err := json.Unmarshal([]byte(strings.ReplaceAll(string(b), `"`+from, `"`+to)), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

// nameProblems lists every name and label value among objs that
// Kubernetes would refuse, including those controllers derive: a
// StatefulSet's pods and their controller-revision-hash label.
func nameProblems(objs []*unstructured.Unstructured) []string {
	var problems []string
	check := func(what, value string, errs []string) {
		for _, e := range errs {
			problems = append(problems, fmt.Sprintf("%s %q: %s", what, value, e))
		}
	}
	for _, o := range objs {
		name, kind := o.GetName(), o.GetKind()
		switch kind {
		case "Service":
			check(kind, name, validation.IsDNS1035Label(name))
		case "StatefulSet":
			check(kind, name, validation.IsDNS1123Subdomain(name))
			revision := name + "-" + strings.Repeat("h", 10)
			check("controller-revision-hash label", revision, validation.IsValidLabelValue(revision))
			check("pod", name+"-0", validation.IsDNS1123Label(name+"-0"))
		default:
			check(kind, name, validation.IsDNS1123Subdomain(name))
		}
		for _, p := range [][]string{
			{"metadata", "labels"}, {"spec", "selector"}, {"spec", "selector", "matchLabels"},
			{"spec", "template", "metadata", "labels"},
		} {
			m, _, _ := unstructured.NestedStringMap(o.Object, p...)
			for k, v := range m {
				check(kind+" "+name+" label "+k, v, validation.IsValidLabelValue(v))
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// TestInstanceNameLimitIsExact shows that v1alpha1.MaxInstanceNameLength
// is exact: every object of an instance of that many characters is valid;
// one character more and one is not.
func TestInstanceNameLimitIsExact(t *testing.T) {
	longest := strings.Repeat("i", v1alpha1.MaxInstanceNameLength)
	objs := renderAll(t, longest)
	if len(objs) < 11 {
		t.Fatalf("want every object of the instance, got %d", len(objs))
	}
	if diff := cmp.Diff([]string(nil), nameProblems(objs)); diff != "" {
		t.Errorf("instance name of %d characters: -want no problems, +got:\n%s", len(longest), diff)
	}
	tooLong := longest + "i"
	want := []string{fmt.Sprintf("controller-revision-hash label %q: must be no more than 63 bytes", tooLong+"-metadata-pg-hhhhhhhhhh")}
	if diff := cmp.Diff(want, nameProblems(renamed(t, objs, longest, tooLong))); diff != "" {
		t.Errorf("instance name of %d characters: -want, +got:\n%s", len(tooLong), diff)
	}
}

// TestComputeRefusesABadName: a composite that did not come through the
// claim's admission is refused by the function too, and nothing is
// rendered.
func TestComputeRefusesABadName(t *testing.T) {
	longest := strings.Repeat("i", v1alpha1.MaxInstanceNameLength)
	cases := map[string]struct {
		name string
		want string
	}{
		"TooLong": {
			name: longest + "i",
			want: `metadata.name: Invalid value: "` + longest + `i": a FireboltInstance name may be at most 40 characters: its PostgreSQL StatefulSet <name>-metadata-pg must fit in 52 characters`,
		},
		"NotADNSLabel": {
			name: "fire.bolt",
			want: `metadata.name: Invalid value: "fire.bolt": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if n := renderAll(t, tc.name); len(n) != 0 {
				t.Errorf("want nothing rendered, got %d objects", len(n))
			}
			cfg, _ := (&v1beta1.Input{}).Resolve()
			p, err := Compute(Inputs{Claim: tc.name, Namespace: "firebolt", CandidatePassword: "pw"}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range p.Conditions {
				got = append(got, c.Type+"/"+c.Reason+": "+c.Message)
			}
			want := []string{TypeMetadataReady + "/" + ReasonLimitExceeded + ": " + tc.want, TypeGatewayReady + "/" + ReasonLimitExceeded + ": " + tc.want,
				TypeGatewayTLSReady + "/" + ReasonTLSDisabled + ": " + tlsDisabledText}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("conditions: -want, +got:\n%s", diff)
			}
		})
	}
}
