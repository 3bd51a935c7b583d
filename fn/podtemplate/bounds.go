package podtemplate

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ResourceBounds reports every request and limit in effective that exceeds
// the maximum for its resource name. A resource with no maximum, or a zero
// one, is unbounded. Requests and limits are checked against the same
// maximum. path leads to the resources field, e.g.
// spec.template.spec.containers[engine].resources; errors read
// "<path>.requests[cpu]: Invalid value: "64": exceeds maximum 32".
func ResourceBounds(effective corev1.ResourceRequirements, maximum corev1.ResourceList, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, l := range []struct {
		name string
		list corev1.ResourceList
	}{{"requests", effective.Requests}, {"limits", effective.Limits}} {
		names := make([]string, 0, len(l.list))
		for n := range l.list {
			names = append(names, string(n))
		}
		sort.Strings(names)
		for _, n := range names {
			limit, ok := maximum[corev1.ResourceName(n)]
			if !ok || limit.IsZero() {
				continue
			}
			q := l.list[corev1.ResourceName(n)]
			if q.Cmp(limit) > 0 {
				errs = append(errs, field.Invalid(path.Child(l.name).Key(n), q.String(), "exceeds maximum "+limit.String()))
			}
		}
	}
	return errs
}
