package engine

import (
	"strconv"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// Labels the engine's objects carry. The generation label is what the
// routing Service selects on, so cutover is a change of one label value.
const (
	LabelEngine     = contract.LabelEngine
	LabelGeneration = "firebolt.io/generation"
)

// kindConfigMap is the kind of the ConfigMaps an engine composes and
// requires.
const kindConfigMap = "ConfigMap"

// Annotations on a generation's StatefulSet, as the original stamped them.
const (
	AnnotationMetadataOverride = "firebolt.io/metadata-override"
	AnnotationCustomConfigHash = "firebolt.io/custom-engine-config-hash"
	AnnotationEngineClassHash  = "firebolt.io/engine-class-hash"
	// AnnotationTemplateHash is the hash of the pod template of a
	// StatefulSet rendered for rollout: phased, which tells a step whether
	// the observed StatefulSet already carries the recorded template.
	AnnotationTemplateHash = "firebolt.io/pod-template-hash"
)

// Composition-resource-name suffixes of a generation's objects, and the key
// of the routing Service, which is one resource whose selector moves.
const (
	suffixStatefulSet = "statefulset"
	suffixHeadless    = "headless"
	suffixConfig      = "config"

	// RoutingServiceKey is the routing Service's composition-resource-name.
	RoutingServiceKey resource.Name = "service"
)

// generationSuffixes lists a generation's resource-name suffixes in the
// order the original applied them.
var generationSuffixes = []string{suffixConfig, suffixHeadless, suffixStatefulSet}

// resourceName is the composition-resource-name of one of generation gen's
// objects, e.g. g3-statefulset.
func resourceName(gen int, suffix string) resource.Name {
	return resource.Name("g" + strconv.Itoa(gen) + "-" + suffix)
}

// parseResourceName splits a generation's composition-resource-name into its
// generation and suffix.
func parseResourceName(n resource.Name) (int, string, bool) {
	s, ok := strings.CutPrefix(string(n), "g")
	if !ok {
		return 0, "", false
	}
	num, suffix, ok := strings.Cut(s, "-")
	if !ok {
		return 0, "", false
	}
	g, err := strconv.Atoi(num)
	if err != nil || g < 0 || strconv.Itoa(g) != num {
		return 0, "", false
	}
	for _, known := range generationSuffixes {
		if suffix == known {
			return g, suffix, true
		}
	}
	return 0, "", false
}

// Object names, one helper as the original's genResourceName.
func statefulSetName(engine string, gen int) string { return engine + "-g" + strconv.Itoa(gen) }
func headlessName(engine string, gen int) string    { return statefulSetName(engine, gen) + "-hl" }
func configMapName(engine string, gen int) string   { return statefulSetName(engine, gen) + "-config" }
func routingServiceName(engine string) string       { return contract.RoutingService(engine) }

// generationLabels are the labels of every object of one generation, and
// the selector of its pods.
func generationLabels(engine string, gen int) map[string]string {
	return map[string]string{LabelEngine: engine, LabelGeneration: strconv.Itoa(gen)}
}

// generationSpan is how many generation numbers there are: 0 through
// v1alpha1.MaxGeneration, so a generation's number has at most three digits
// and the engine name limit holds at every generation.
const generationSpan = v1alpha1.MaxGeneration + 1

// nextGeneration is the number of the generation after n: n+1, wrapping to
// 0 after v1alpha1.MaxGeneration, and skipping every number inUse reports.
// At most three generations are in use at once, so a free number is always
// found; a number comes back only after a thousand others were allocated.
// A status from before the wrap (n beyond the span) moves into it.
func nextGeneration(n int, inUse func(int) bool) int {
	g := ((n % generationSpan) + generationSpan) % generationSpan
	for range generationSpan {
		g = (g + 1) % generationSpan
		if !inUse(g) {
			return g
		}
	}
	// Every number in use: impossible with three live generations.
	return (g + 1) % generationSpan
}
