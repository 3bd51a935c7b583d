package phasedsts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/errors"

	appsapi "github.com/firebolt-db/firebolt-crossplane/apis/apps/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// AnnotationTemplateHash on the composed StatefulSet is the hash of the pod
// template it was last given. A call whose template hashes differently is
// about to create a new revision, and must hold every pod in that same
// apply: the partition it renders is the replica count.
const AnnotationTemplateHash = appsapi.Group + "/template-hash"

// ResourceName is the composition-resource-name of the StatefulSet.
const ResourceName = "statefulset"

// Rendered is the StatefulSet a call composes, before the partition is
// decided.
type Rendered struct {
	// Spec is the user's StatefulSet spec with the update strategy the
	// phased rollout needs; the partition is set by Object.
	sts appsv1.StatefulSet
	// TemplateHash identifies the pod template.
	TemplateHash string
	// Replicas is spec.replicas, defaulted as the API server defaults it.
	Replicas int32
}

// Render builds the StatefulSet of spec, named name in namespace.
func Render(name, namespace string, spec appsapi.PhasedStatefulSetSpec) (Rendered, error) {
	s := *spec.StatefulSet.Spec.DeepCopy()
	replicas := int32(1)
	if s.Replicas != nil {
		replicas = *s.Replicas
	}
	hash, err := templateHash(s.Template)
	if err != nil {
		return Rendered{}, err
	}
	ru := &appsv1.RollingUpdateStatefulSetStrategy{}
	if s.UpdateStrategy.RollingUpdate != nil {
		ru.MaxUnavailable = s.UpdateStrategy.RollingUpdate.MaxUnavailable
	}
	s.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: ru}

	annotations := maps.Clone(spec.StatefulSet.Metadata.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationTemplateHash] = hash
	return Rendered{
		sts: appsv1.StatefulSet{
			TypeMeta: metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "StatefulSet"},
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Namespace:   namespace,
				Labels:      maps.Clone(spec.StatefulSet.Metadata.Labels),
				Annotations: annotations,
			},
			Spec: s,
		},
		TemplateHash: hash,
		Replicas:     replicas,
	}, nil
}

// Object is the StatefulSet as desired state, with partition p.
func (r Rendered) Object(p int32) (map[string]any, error) {
	sts := r.sts.DeepCopy()
	sts.Spec.UpdateStrategy.RollingUpdate.Partition = &p
	return composite.ToDesired(sts)
}

// templateHash hashes the template's JSON encoding, which sorts map keys, so
// equal templates hash equally whatever order a user wrote them in.
func templateHash(t any) (string, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return "", errors.Wrap(err, "cannot encode the pod template")
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), nil
}
