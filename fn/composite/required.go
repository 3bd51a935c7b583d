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

// SecretFacts are what a composer may know of a required Secret: whether
// Crossplane fetched and found it, its resourceVersion, and whether one
// key holds a non-empty value. Never a value.
type SecretFacts struct {
	// Resolved is false until Crossplane has tried to fetch the Secret.
	Resolved bool
	// Found is false when the Secret does not exist.
	Found bool
	// ResourceVersion changes whenever the Secret is written.
	ResourceVersion string
	// KeyNonEmpty: the key asked about holds a non-empty value.
	KeyNonEmpty bool
}

// RequiredSecretFacts reads SecretFacts of the Secret called name, and of
// its key, from what Crossplane fetched for the requirement reqName. They
// are read where they are in the request: nothing of the Secret is
// converted, decoded or copied, so no value of it reaches the caller,
// an error, a log or a response.
func RequiredSecretFacts(req *fnv1.RunFunctionRequest, reqName, name, key string) SecretFacts {
	rrs, resolved := req.GetRequiredResources()[reqName]
	f := SecretFacts{Resolved: resolved}
	for _, it := range rrs.GetItems() {
		fields := it.GetResource().GetFields()
		md := fields["metadata"].GetStructValue().GetFields()
		if md["name"].GetStringValue() != name {
			continue
		}
		f.Found = true
		f.ResourceVersion = md["resourceVersion"].GetStringValue()
		// Crossplane hands data in base64, so a non-empty value is a
		// non-empty string.
		f.KeyNonEmpty = key != "" && fields["data"].GetStructValue().GetFields()[key].GetStringValue() != ""
		return f
	}
	return f
}
