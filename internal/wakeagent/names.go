package wakeagent

import (
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// serviceSuffix ends the name of every engine's Service; the EndpointSlices
// of other Services in the namespace are not engines and are ignored.
const serviceSuffix = "-service"

// engineOfSlice is the engine an EndpointSlice serves: its Service name
// less serviceSuffix, or "" when the slice belongs to no engine.
func engineOfSlice(s *discoveryv1.EndpointSlice) string {
	svc := s.Labels[discoveryv1.LabelServiceName]
	engine, ok := strings.CutSuffix(svc, serviceSuffix)
	if !ok || engine == "" {
		return ""
	}
	return engine
}

// validEngine reports whether name can name an engine: a DNS-1035 label of
// at most 63 characters, as the claim's name is. Anything else is refused
// before it reaches a map, a metric label or the API server.
func validEngine(name string) bool {
	return name != "" && len(validation.IsDNS1035Label(name)) == 0
}
