package engine

import "testing"

// TestEvaluateInstanceUsesTheAccountInUse: an instance that refuses a new
// spec.id keeps serving the account in status.id, so its engines must be
// configured with that one.
func TestEvaluateInstanceUsesTheAccountInUse(t *testing.T) {
	cases := map[string]struct {
		spec, published string
		want            string
	}{
		"SpecRefusedByTheInstance": {spec: "01KP98J0000000000000000000", published: "01AAAAAAAAAAAAAAAAAAAAAAAA", want: "01AAAAAAAAAAAAAAAAAAAAAAAA"},
		"OnlyPublished":            {published: "01AAAAAAAAAAAAAAAAAAAAAAAA", want: "01AAAAAAAAAAAAAAAAAAAAAAAA"},
		"OnlySpec":                 {spec: "01KP98J0000000000000000000", want: "01KP98J0000000000000000000"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := testInputs(t, "stable", 0, 0)
			in.Instance.Spec.ID = tc.spec
			in.Instance.Status.ID = tc.published
			got := evaluateInstance(in)
			if !got.Ready || got.ID != tc.want {
				t.Errorf("evaluateInstance(spec.id %q, status.id %q): ready %v, id %q; want ready, id %q", tc.spec, tc.published, got.Ready, got.ID, tc.want)
			}
		})
	}
}
