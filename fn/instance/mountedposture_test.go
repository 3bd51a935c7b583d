package instance

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// TestMountedPostureOfHostileDeployments: the posture an observed gateway
// Deployment mounts is read from whatever shape its volumes arrive in.
// Values are JSON's (the observed state is decoded from JSON). Nothing
// panics; a value of the wrong type counts as absent, so a
// Deployment whose volumes cannot be read is judged to serve plain, and any
// TLS posture asked for is then a tightening (fail-closed).
func TestMountedPostureOfHostileDeployments(t *testing.T) {
	deployment := func(volumes any) *composed.Unstructured {
		d := composed.New()
		d.Object = map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"volumes": volumes}}}}
		return d
	}
	clientCA := func(projected any) map[string]any {
		return map[string]any{"name": podtemplate.VolumeClientCA, "projected": projected}
	}
	tls := &v1alpha1.GatewayTLSStatus{Mode: v1alpha1.GatewayTLSModeTLS}
	mutual := func(ca string) *v1alpha1.GatewayTLSStatus {
		return &v1alpha1.GatewayTLSStatus{Mode: v1alpha1.GatewayTLSModeMutualTLS, ClientCASecretName: ca}
	}
	cases := map[string]struct {
		d        *composed.Unstructured
		want     *v1alpha1.GatewayTLSStatus
		observed bool
	}{
		"NoDeployment":          {d: nil},
		"NoSpec":                {d: composed.New(), observed: true},
		"VolumesNotAList":       {d: deployment("tls-gateway"), observed: true},
		"VolumesOfWrongTypes":   {d: deployment([]any{nil, int64(42), 4.5, true, "tls-gateway", []any{"client-ca"}}), observed: true},
		"NameNotAString":        {d: deployment([]any{map[string]any{"name": []any{podtemplate.VolumeGatewayTLS}}}), observed: true},
		"TLS":                   {d: deployment([]any{map[string]any{"name": podtemplate.VolumeGatewayTLS}}), want: tls, observed: true},
		"MutualTLS":             {d: deployment([]any{map[string]any{"name": podtemplate.VolumeGatewayTLS}, clientCA(map[string]any{"sources": []any{map[string]any{"secret": map[string]any{"name": "ca"}}}})}), want: mutual("ca"), observed: true},
		"ProjectedNotAMap":      {d: deployment([]any{clientCA("ca")}), want: mutual(""), observed: true},
		"SourcesNotAList":       {d: deployment([]any{clientCA(map[string]any{"sources": map[string]any{"secret": "ca"}})}), want: mutual(""), observed: true},
		"NoSources":             {d: deployment([]any{clientCA(map[string]any{"sources": []any{}})}), want: mutual(""), observed: true},
		"SourceNotAMap":         {d: deployment([]any{clientCA(map[string]any{"sources": []any{"ca"}})}), want: mutual(""), observed: true},
		"SecretNameNotAString":  {d: deployment([]any{clientCA(map[string]any{"sources": []any{map[string]any{"secret": map[string]any{"name": int64(7)}}}})}), want: mutual(""), observed: true},
		"ClientCABeforeTheCert": {d: deployment([]any{clientCA(map[string]any{"sources": []any{map[string]any{"secret": map[string]any{"name": "ca"}}}}), map[string]any{"name": podtemplate.VolumeGatewayTLS}}), want: mutual("ca"), observed: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, observed := mountedPosture(tc.d)
			if observed != tc.observed {
				t.Errorf("mountedPosture(...): observed %t, want %t", observed, tc.observed)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mountedPosture(...): -want, +got:\n%s", diff)
			}
		})
	}
}
