package envoyconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// With a wake agent the script asks it about the engine as its last step and
// stops the request only on an answer that carries the agent's decision.
func TestRouteScriptAsksTheWakeAgent(t *testing.T) {
	hold := agentCall{
		Cluster:   wakeAgentClusterName,
		Headers:   map[string]string{":method": "GET", ":path": "/hold?engine=sales", ":authority": "wake-agent"},
		TimeoutMS: 125000,
	}
	unavailable := func(decision, retry string) outcome {
		o := forwarded("sales", "/", engineHeader("sales"))
		o.Reply = &localReply{
			Headers: map[string]string{":status": "503", "retry-after": retry, "x-firebolt-wake-decision": decision},
			Body:    "engine is not available; retry shortly",
		}
		return o
	}
	cases := map[string]struct {
		reason string
		in     []header
		agent  map[string]string
		want   outcome
		calls  []agentCall
	}{
		"Ready": {
			reason: "A ready engine is routed at once.",
			in:     request("/?engine=sales"),
			agent:  map[string]string{":status": "200", "x-firebolt-wake-decision": "ready"},
			want:   forwarded("sales", "/", engineHeader("sales")),
			calls:  []agentCall{hold},
		},
		"Released": {
			reason: "A held request goes on once the engine is ready.",
			in:     request("/?engine=sales"),
			agent:  map[string]string{":status": "200", "x-firebolt-wake-decision": "released"},
			want:   forwarded("sales", "/", engineHeader("sales")),
			calls:  []agentCall{hold},
		},
		"TimedOut": {
			reason: "The agent's 503 is passed on with its Retry-After.",
			in:     request("/?engine=sales"),
			agent:  map[string]string{":status": "503", "x-firebolt-wake-decision": "timeout", "retry-after": "5"},
			want:   unavailable("timeout", "5"),
			calls:  []agentCall{hold},
		},
		"ShedWithoutRetryAfter": {
			reason: "Without a usable Retry-After the client is told 10 s.",
			in:     request("/?engine=sales"),
			agent:  map[string]string{":status": "503", "x-firebolt-wake-decision": "shed", "retry-after": "soon"},
			want:   unavailable("shed", "10"),
			calls:  []agentCall{hold},
		},
		"AgentUnreachable": {
			reason: "Envoy's own 503 for an unreachable agent has no decision header: route through (fail open).",
			in:     request("/?engine=sales"),
			agent:  map[string]string{":status": "503"},
			want:   forwarded("sales", "/", engineHeader("sales")),
			calls:  []agentCall{hold},
		},
		"RejectedSelectorNeverAsks": {
			reason: "A request the script rejects never reaches the agent, so it never stamps.",
			in:     request("/?engine=Sales"),
			want:   rejected(request("/?engine=Sales"), reasonMissing),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			envoy := newEnvoy(t, renderedScript(t, Params{Namespace: "analytics", WakeAgent: true}))
			envoy.agent = func(agentCall) map[string]string { return tc.agent }
			got, err := envoy.request(tc.in)
			if err != nil {
				t.Fatalf("envoy_on_request: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nenvoy_on_request: -want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.calls, envoy.calls); diff != "" {
				t.Errorf("%s\ncalls to the agent: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// Without a wake agent the script never calls out.
func TestRouteScriptWithoutWakeAgentNeverCalls(t *testing.T) {
	envoy := newEnvoy(t, renderedScript(t, Params{Namespace: "analytics"}))
	if _, err := envoy.request(request("/?engine=sales")); err != nil {
		t.Fatalf("envoy_on_request: %v", err)
	}
	if len(envoy.calls) != 0 {
		t.Errorf("calls to an agent the gateway does not run: %+v", envoy.calls)
	}
}
