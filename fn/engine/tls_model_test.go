package engine_test

import (
	"flag"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// manualRenewals has TestModelEngineTLS renew Certificates again and
// again (tlsSim.manualRenewals).
var manualRenewals = flag.Bool("tls.manual-renewals", false, "TestModelEngineTLS: renew a Certificate any number of times")

// drawTLSSpec draws a claim spec for the engine-TLS model: replicas,
// image and drain policy (blue-green rollouts only).
func drawTLSSpec(d draws) map[string]any {
	spec := map[string]any{"instanceRef": simInstance, "replicas": float64(d.intn(0, 3, "replicas")), "storage": map[string]any{}}
	if img := d.intn(0, 3, "image"); img > 0 {
		spec["template"] = map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "engine", "image": fmt.Sprintf("ghcr.io/firebolt-db/engine:v%d", img)},
		}}}
	}
	switch d.intn(0, 4, "policy") {
	case 0:
		spec["rollout"] = "recreate"
	case 1:
		spec["drainCheckEnabled"] = false
	}
	return spec
}

// TestModelEngineTLS runs the engine composer against the simulated
// Crossplane loop, cert-manager and the instance's gateway (tls_sim_test.go)
// through random spec edits, engine TLS turned on and off at the
// instance, changes of the issuer's CA, renewals, gateway rollouts of
// random speed (stuck among them), cert-manager delays (held among them),
// drain verdicts, function restarts, crashes and lost writes, checking
// after every step (and between the gateway's move and the engine's call)
// that no gateway pod is sent where it cannot reach the engine
// (tlsSim.checkTLS) besides sim.check's invariants; then lets the
// environment go quiet and checks that the engine and its gateway settle
// on the latest spec in the instance's protocol, the next Service gone.
func TestModelEngineTLS(t *testing.T) {
	var total tlsStats
	rapid.Check(t, func(rt *rapid.T) {
		d := rapidDraws{rt}
		s := newTLSSim(rt, d, drawTLSSpec(d), d.intn(1, 3, "gateway pods"))
		s.readyDelay = 2
		s.tlsOn = d.intn(0, 1, "engine TLS at start") == 1
		s.ca = d.intn(0, 2, "issuer CA")
		s.speed = d.intn(0, len(s.pods), "gateway speed")
		s.cmDelay = d.intn(0, 3, "cert-manager delay bound")
		s.Crash = true
		s.manualRenewals = *manualRenewals
		for range d.intn(1, 60, "chaos steps") {
			switch d.intn(0, 11, "event") {
			case 0:
				s.SetSpec(drawTLSSpec(d))
			case 1:
				s.tlsOn = d.intn(0, 1, "engine TLS") == 1
				s.history = append(s.history, fmt.Sprintf("  instance: engine TLS %v", s.tlsOn))
			case 2:
				s.ca = d.intn(0, 2, "issuer CA")
				s.history = append(s.history, fmt.Sprintf("  issuer's CA is now CA%d", s.ca))
			case 3:
				s.Renew(d.intn(0, 3, "renewed certificate"))
			case 4:
				s.speed = d.intn(0, len(s.pods), "gateway speed")
				s.history = append(s.history, fmt.Sprintf("  gateway speed %d", s.speed))
			case 5:
				s.cmDelay = d.intn(0, 3, "cert-manager delay bound")
				s.cmHold = d.intn(0, 2, "cert-manager held") == 0
				s.history = append(s.history, fmt.Sprintf("  cert-manager delay %d held %v", s.cmDelay, s.cmHold))
			case 6:
				s.verdict = drawVerdict(d)
			case 7:
				s.restart()
			}
			s.Step()
		}

		// Quiet: a last edit, then cert-manager issues, the gateway rolls,
		// old generations drain, nothing crashes.
		if d.intn(0, 1, "last edit") == 1 {
			s.SetSpec(drawTLSSpec(d))
		}
		s.Crash = false
		s.cmHold = false
		s.speed = max(s.speed, 1)
		s.verdict = scrape.Verdict{Drained: true}
		s.history = append(s.history, "  quiet")
		s.settle(60)
		total.add(s.stats)
	})
	t.Logf("simulated %d steps: %d protocol switches, %d TLS-to-TLS switches, %d calls held for the gateway, %d generations rolled for a renewal, %d steps with the next Service, %d restarts",
		total.steps, total.protocolSwitches, total.tlsSwitches, total.gatewayHolds, total.renewalRolls, total.nextSteps, total.restarts)
}
