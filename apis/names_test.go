package apis_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// TestClaimNames admits claims and composites by name. Composed objects are
// named after the claim, so the claim's name is limited; the composite is
// named <claim>-<5 random characters> by Crossplane and only Crossplane's
// own limit of 63 characters applies to it.
func TestClaimNames(t *testing.T) {
	engineTooLong := `metadata.name: Invalid value: a FireboltEngine name may be at most 47 characters: its StatefulSets <name>-g<generation> (generations 0-999) must fit in 52 characters`
	engineNotALabel := `metadata.name: Invalid value: a FireboltEngine name must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter and ending with a letter or digit): it names Services`
	instanceTooLong := `metadata.name: Invalid value: a FireboltInstance name may be at most 40 characters: its PostgreSQL StatefulSet <name>-metadata-pg must fit in 52 characters`
	instanceNotALabel := `metadata.name: Invalid value: a FireboltInstance name must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter and ending with a letter or digit): it names Services`
	crossplaneLimit := `metadata.name: Too long: may not be more than 63 bytes`
	named := func(name string) func(map[string]any) map[string]any { return setf("metadata.name", name) }
	long := func(n int) string { return strings.Repeat("a", n) }

	cases := map[string]struct {
		reason    string
		kind      string
		file      string
		composite bool
		name      string
		// oldName, when set, makes the case an update of a claim that was
		// admitted under older rules.
		oldName string
		errors  []string
	}{
		"EngineAtTheLimit": {
			reason: "An engine name of the maximum length is accepted.",
			kind:   "FireboltEngine", file: "engine.yaml", name: long(v1alpha1.MaxEngineNameLength),
		},
		"EngineOneAboveTheLimit": {
			reason: "One more character and a StatefulSet name would not fit at generation 999.",
			kind:   "FireboltEngine", file: "engine.yaml", name: long(v1alpha1.MaxEngineNameLength + 1),
			errors: []string{engineTooLong},
		},
		"EngineStartingWithADigit": {
			reason: "Services are named after the engine and must start with a letter.",
			kind:   "FireboltEngine", file: "engine.yaml", name: "1st",
			errors: []string{engineNotALabel},
		},
		"EngineWithADot": {
			reason: "A dot is fine in a claim's name but not in a Service's.",
			kind:   "FireboltEngine", file: "engine.yaml", name: "my.engine",
			errors: []string{engineNotALabel},
		},
		"EngineCompositeOfTheLongestClaim": {
			reason: "The composite of a claim at the limit is named <claim>-<5 characters>; its name is not limited.",
			kind:   "FireboltEngine", file: "engine.yaml", composite: true, name: long(v1alpha1.MaxEngineNameLength) + "-x7k2p",
		},
		"EngineAdmittedUnderOlderRules": {
			reason: "A claim admitted before the limit still takes updates (Crossplane's finalizer, its deletion).",
			kind:   "FireboltEngine", file: "engine.yaml", name: long(60), oldName: long(60),
		},
		"EngineAboveCrossplanesLimit": {
			reason: "Crossplane's own limit on claim names still applies.",
			kind:   "FireboltEngine", file: "engine.yaml", name: long(64),
			errors: []string{engineTooLong, crossplaneLimit},
		},
		"InstanceAtTheLimit": {
			reason: "An instance name of the maximum length is accepted.",
			kind:   "FireboltInstance", file: "instance.yaml", name: long(v1alpha1.MaxInstanceNameLength),
		},
		"InstanceOneAboveTheLimit": {
			reason: "One more character and the PostgreSQL StatefulSet name would not fit.",
			kind:   "FireboltInstance", file: "instance.yaml", name: long(v1alpha1.MaxInstanceNameLength + 1),
			errors: []string{instanceTooLong},
		},
		"InstanceWithADot": {
			reason: "Services are named after the instance.",
			kind:   "FireboltInstance", file: "instance.yaml", name: "fire.bolt",
			errors: []string{instanceNotALabel},
		},
		"InstanceCompositeOfTheLongestClaim": {
			reason: "The composite's name is not limited.",
			kind:   "FireboltInstance", file: "instance.yaml", composite: true, name: long(v1alpha1.MaxInstanceNameLength) + "-x7k2p",
		},
		"ClassNamesAreNotLimited": {
			reason: "A class is named by its engines' Usages' firebolt.io/engine-class label and its ConfigMap <name>-engineclass: Crossplane's limit is a label value's, so it is the only one.",
			kind:   "FireboltEngineClass", file: "engineclass.yaml", name: "1." + long(61),
		},
		"ClassAboveCrossplanesLimit": {
			reason: "A class name that could not be a label value is refused by Crossplane's limit on claim names.",
			kind:   "FireboltEngineClass", file: "engineclass.yaml", name: long(64),
			errors: []string{crossplaneLimit},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := serversFor(t, tc.kind)
			srv, conv := s.claim, func(m map[string]any) map[string]any { return m }
			if tc.composite {
				srv, conv = s.composite, asComposite
			}
			var old map[string]any
			if tc.oldName != "" {
				old = conv(ex(tc.file, named(tc.oldName))(t))
			}
			got := srv.admit(conv(ex(tc.file, named(tc.name))(t)), old)
			if diff := cmp.Diff(tc.errors, got.Errors); diff != "" {
				t.Errorf("%s\nerrors: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
