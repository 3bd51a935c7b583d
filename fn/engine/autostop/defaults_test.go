package autostop

import (
	"testing"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

func TestResolve(t *testing.T) {
	engine := &v1alpha1.AutoStopSpec{Enabled: false, ActiveReplicas: 1}
	class := &v1alpha1.AutoStopSpec{Enabled: true, ActiveReplicas: 3}
	cases := map[string]struct {
		reason        string
		engine, class *v1alpha1.AutoStopSpec
		want          *v1alpha1.AutoStopSpec
	}{
		"Neither":         {reason: "No autoStop anywhere is none.", want: nil},
		"ClassOnly":       {reason: "An engine without autoStop takes its class's.", class: class, want: class},
		"EngineWinsWhole": {reason: "The fallback is whole-struct: an engine's disabled autoStop hides the class's enabled one.", engine: engine, class: class, want: engine},
		"EngineOnly":      {reason: "An engine's own autoStop without a class.", engine: engine, want: engine},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Resolve(tc.engine, tc.class); got != tc.want {
				t.Errorf("%s\nResolve(...) = %+v, want %+v", tc.reason, got, tc.want)
			}
		})
	}
}
