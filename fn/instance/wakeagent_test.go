package instance

import (
	"testing"
	"time"
)

// The agent's preStop pause must outlast Envoy's drain, or a request the
// agent still holds is cut off while Envoy could answer it, and must end
// within the grace period, or the kubelet kills the agent mid-pause.
func TestWakeAgentStopsAfterEnvoyDrains(t *testing.T) {
	drain, pause, grace := gatewayDrainSeconds*time.Second, time.Duration(wakeAgentStopSeconds)*time.Second, time.Duration(gatewayGracePeriod)*time.Second
	if drain >= pause || pause >= grace {
		t.Errorf("Envoy drains for %s, the wake agent pauses %s, the grace period is %s: want drain < pause < grace", drain, pause, grace)
	}
}
