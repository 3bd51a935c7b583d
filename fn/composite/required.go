package composite

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// Select asks Crossplane for one object of kind by name, in namespace.
func Select(apiVersion, kind, namespace, name string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: apiVersion,
		Kind:       kind,
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: name},
		Namespace:  &namespace,
	}
}

// RequiredSecret is the data of the Secret called name that Crossplane
// fetched for the requirement reqName: found is false when it found none,
// resolved false until it has tried. Its values only ever go where the
// caller sends them: a decode error names the Secret, never its content.
func RequiredSecret(req *fnv1.RunFunctionRequest, reqName, name string) (data map[string][]byte, found, resolved bool, err error) {
	u, resolved, err := RequiredNamed(req, reqName, "Secret "+name, name)
	if err != nil || u == nil {
		return nil, false, resolved, err
	}
	s := &corev1.Secret{}
	if Decode(u.Object, s) != nil {
		return nil, false, resolved, errors.Errorf("cannot decode Secret %s: its data is not base64-encoded key/value pairs", name)
	}
	return s.Data, true, resolved, nil
}
