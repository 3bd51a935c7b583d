// Package argocd runs the Argo CD health checks shipped in
// deploy/argocd/argocd-cm.yaml in a Lua interpreter, the way Argo CD does:
// the object as the global `obj`, the script's returned table as the health.
package argocd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	lua "github.com/yuin/gopher-lua"
	"sigs.k8s.io/yaml"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/internal/xptools"
)

type health struct{ Status, Message string }

func scripts(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(xptools.Root(), "deploy", "argocd", "argocd-cm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct{ Data map[string]string }
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data
}

func toLua(ls *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		tbl := ls.NewTable()
		for k, e := range v {
			tbl.RawSetString(k, toLua(ls, e))
		}
		return tbl
	case []any:
		tbl := ls.NewTable()
		for _, e := range v {
			tbl.Append(toLua(ls, e))
		}
		return tbl
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case nil:
		return lua.LNil
	}
	panic("unexpected type")
}

func evaluate(t *testing.T, script, object string) health {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(object), &obj); err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	fn, err := L.LoadString(script)
	if err != nil {
		t.Fatalf("health script does not compile: %v", err)
	}
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		t.Fatalf("health script failed: %v", err)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("health script returned %v, want a table", L.Get(-1))
	}
	return health{Status: ret.RawGetString("status").String(), Message: ret.RawGetString("message").String()}
}

func TestEngineHealth(t *testing.T) {
	script := scripts(t)["resource.customizations.health.compute.firebolt.io_FireboltEngine"]
	cases := map[string]struct {
		obj  string
		want health
	}{
		"NoStatus": {
			obj:  `{kind: FireboltEngine}`,
			want: health{"Progressing", "Waiting for the engine to report status"},
		},
		"Serving": {
			obj:  `{status: {conditions: [{type: Synced, status: "True"}, {type: EngineReady, status: "True", reason: EngineReady, message: serving traffic on generation 3}]}}`,
			want: health{"Healthy", "serving traffic on generation 3"},
		},
		"Stopped": {
			obj:  `{status: {conditions: [{type: EngineReady, status: "False", reason: Stopped, message: Engine is stopped (spec.replicas is 0)}]}}`,
			want: health{"Suspended", "Engine is stopped (spec.replicas is 0)"},
		},
		"AutoStopped": {
			obj:  `{metadata: {generation: 2}, status: {observedGeneration: 2, conditions: [{type: EngineReady, status: "False", reason: AutoStopped, message: Engine is stopped by auto-stop (Idle)}]}}`,
			want: health{"Suspended", "Engine is stopped by auto-stop (Idle)"},
		},
		"Rolling": {
			obj:  `{status: {conditions: [{type: EngineReady, status: "False", reason: Rolling, message: Engine is in draining phase}]}}`,
			want: health{"Progressing", "Engine is in draining phase"},
		},
		"UpdatingInPlace": {
			obj:  `{metadata: {generation: 4}, status: {phase: updating, observedGeneration: 3, conditions: [{type: EngineReady, status: "False", reason: Rolling, message: "Engine is updating generation 0 in place, one pod at a time"}, {type: PhasedRollout, status: "False", reason: CheckError, message: connection refused}]}}`,
			want: health{"Progressing", "generation 4 is not fully in effect yet (observedGeneration 3): Engine is updating generation 0 in place, one pod at a time"},
		},
		"WaitingForInstance": {
			obj:  `{status: {conditions: [{type: EngineReady, status: "False", reason: InstanceNotReady, message: instance demo has no metadata endpoint}]}}`,
			want: health{"Progressing", "instance demo has no metadata endpoint"},
		},
		"StuckOnStatefulSetEvent": {
			obj:  `{status: {conditions: [{type: EngineReady, status: "False", reason: FailedCreate, message: "StatefulSet demo-g1: quota exceeded (x4)"}]}}`,
			want: health{"Degraded", "StatefulSet demo-g1: quota exceeded (x4)"},
		},
		"TemplateRejected": {
			obj:  `{status: {conditions: [{type: EngineReady, status: "False", reason: TemplateRejected}]}}`,
			want: health{"Degraded", "TemplateRejected"},
		},
		"RollingOutANewClaimGeneration": {
			obj:  `{metadata: {generation: 4}, status: {observedGeneration: 3, conditions: [{type: EngineReady, status: "True", reason: EngineReady, message: serving traffic on generation 3}]}}`,
			want: health{"Progressing", "generation 4 is not fully in effect yet (observedGeneration 3): serving traffic on generation 3"},
		},
		"ClaimGenerationInEffect": {
			obj:  `{metadata: {generation: 4}, status: {observedGeneration: 4, conditions: [{type: EngineReady, status: "True", reason: EngineReady, message: serving traffic on generation 5}]}}`,
			want: health{"Healthy", "serving traffic on generation 5"},
		},
		"StoppingNotInEffectYet": {
			obj:  `{metadata: {generation: 5}, status: {observedGeneration: 4, conditions: [{type: EngineReady, status: "False", reason: Stopped, message: Engine is stopped (spec.replicas is 0)}]}}`,
			want: health{"Progressing", "generation 5 is not fully in effect yet (observedGeneration 4): Engine is stopped (spec.replicas is 0)"},
		},
		"RejectedEditIsDegradedNotProgressing": {
			obj:  `{metadata: {generation: 5}, status: {observedGeneration: 4, conditions: [{type: EngineReady, status: "False", reason: TemplateRejected, message: spec.template is rejected}]}}`,
			want: health{"Degraded", "spec.template is rejected"},
		},
		"CrossplaneCannotSync": {
			obj:  `{status: {conditions: [{type: Synced, status: "False", reason: ReconcileError, message: cannot compose}, {type: EngineReady, status: "True", reason: EngineReady}]}}`,
			want: health{"Degraded", "cannot compose"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, evaluate(t, script, tc.obj)); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInstanceHealth(t *testing.T) {
	script := scripts(t)["resource.customizations.health.compute.firebolt.io_FireboltInstance"]
	cases := map[string]struct {
		obj  string
		want health
	}{
		"NoStatus":     {obj: `{}`, want: health{"Progressing", "Waiting for the instance to report status"}},
		"Provisioning": {obj: `{status: {phase: Provisioning}}`, want: health{"Progressing", "Waiting for the instance to report status"}},
		"Ready":        {obj: `{status: {phase: Ready}}`, want: health{"Healthy", "Metadata service and gateway are ready"}},
		"ReadyAtItsGeneration": {
			obj:  `{metadata: {generation: 2}, status: {phase: Ready, observedGeneration: 2}}`,
			want: health{"Healthy", "Metadata service and gateway are ready"},
		},
		"ReadyButEditNotInEffect": {
			obj:  `{metadata: {generation: 3}, status: {phase: Ready, observedGeneration: 2}}`,
			want: health{"Progressing", "generation 3 is not fully in effect yet (observedGeneration 2)"},
		},
		"DegradedStaysDegraded": {
			obj:  `{metadata: {generation: 3}, status: {phase: Degraded, observedGeneration: 2, conditions: [{type: GatewayReady, status: "False", reason: Provisioning, message: waiting}]}}`,
			want: health{"Degraded", "GatewayReady: waiting"},
		},
		"Degraded": {
			obj:  `{status: {phase: Degraded, conditions: [{type: MetadataReady, status: "True"}, {type: GatewayReady, status: "False", reason: DeploymentUnavailable, message: 0 of 2 replicas available}]}}`,
			want: health{"Degraded", "GatewayReady: 0 of 2 replicas available"},
		},
		"NotSynced": {
			obj:  `{status: {phase: Ready, conditions: [{type: Synced, status: "False", reason: ReconcileError}]}}`,
			want: health{"Degraded", "ReconcileError"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, evaluate(t, script, tc.obj)); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEngineClassHealth(t *testing.T) {
	script := scripts(t)["resource.customizations.health.compute.firebolt.io_FireboltEngineClass"]
	cases := map[string]struct {
		obj  string
		want health
	}{
		"Unchecked":  {obj: `{}`, want: health{"Progressing", "Waiting for the class to be checked"}},
		"Admissible": {obj: `{status: {conditions: [{type: Admissible, status: "True", reason: Admissible}]}}`, want: health{"Healthy", "Admissible"}},
		"Rejected": {
			obj:  `{status: {conditions: [{type: Admissible, status: "False", reason: OperatorOwnedFieldSet, message: "spec.template.spec.containers[engine].command: Forbidden"}]}}`,
			want: health{"Degraded", "spec.template.spec.containers[engine].command: Forbidden"},
		},
		"EditNotInEffect": {
			obj:  `{metadata: {generation: 3}, status: {observedGeneration: 2, conditions: [{type: Admissible, status: "True", reason: Admissible}]}}`,
			want: health{"Progressing", "generation 3 is not fully in effect yet (observedGeneration 2)"},
		},
		"AdmissibleAtItsGeneration": {
			obj:  `{metadata: {generation: 3}, status: {observedGeneration: 3, conditions: [{type: Admissible, status: "True", reason: Admissible}]}}`,
			want: health{"Healthy", "Admissible"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, evaluate(t, script, tc.obj)); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPhasedStatefulSetHealth(t *testing.T) {
	script := scripts(t)["resource.customizations.health.apps.firebolt.io_PhasedStatefulSet"]
	cases := map[string]struct {
		obj  string
		want health
	}{
		"NoStatus": {obj: `{}`, want: health{"Progressing", "Waiting for the phased StatefulSet to report status"}},
		"Updated": {
			obj:  `{metadata: {generation: 2}, status: {observedGeneration: 2, conditions: [{type: Updated, status: "True", reason: Updated, message: "every pod runs revision web-1"}]}}`,
			want: health{"Healthy", "every pod runs revision web-1"},
		},
		"HeldByAFailingCheck": {
			obj:  `{metadata: {generation: 3}, status: {observedGeneration: 2, conditions: [{type: Updated, status: "False", reason: Rolling, message: "rolling out revision web-2: last check: returned no data"}]}}`,
			want: health{"Progressing", "generation 3 is not fully in effect yet (observedGeneration 2): rolling out revision web-2: last check: returned no data"},
		},
		"StandardRollingUpdate": {
			obj:  `{status: {conditions: [{type: Updated, status: "True", reason: Suspended, message: "standardRollingUpdate is true"}]}}`,
			want: health{"Suspended", "standardRollingUpdate is true"},
		},
		"InvalidSpec": {
			obj:  `{status: {conditions: [{type: Updated, status: "False", reason: InvalidSpec, message: "spec.statefulSet.spec.selector: must select the pods by labels"}]}}`,
			want: health{"Degraded", "spec.statefulSet.spec.selector: must select the pods by labels"},
		},
		"NotSynced": {
			obj:  `{status: {conditions: [{type: Synced, status: "False", reason: ReconcileError, message: "cannot apply"}, {type: Updated, status: "True", reason: Updated}]}}`,
			want: health{"Degraded", "cannot apply"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, evaluate(t, script, tc.obj)); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPhasedRolloutHealth(t *testing.T) {
	script := scripts(t)["resource.customizations.health.sts.plus_PhasedRollout"]
	managed := `{type: PartitionManaged, status: "True", reason: Managed, message: "provider-kubernetes/x alone sets the partition"}`
	cases := map[string]struct {
		obj  string
		want health
	}{
		"NoStatus": {obj: `{}`, want: health{"Progressing", "Waiting for the phased rollout to report status"}},
		"Updated": {
			obj:  `{metadata: {generation: 1}, status: {observedGeneration: 1, conditions: [{type: Updated, status: "True", reason: Updated, message: "every pod runs revision web-1"}, ` + managed + `]}}`,
			want: health{"Healthy", "every pod runs revision web-1"},
		},
		"UpdatedNotYetApplied": {
			obj:  `{status: {conditions: [{type: Updated, status: "True", reason: Updated, message: "every pod runs revision web-1"}, {type: PartitionManaged, status: "False", reason: Pending, message: "waiting for provider-kubernetes"}]}}`,
			want: health{"Progressing", "waiting for provider-kubernetes"},
		},
		"Rolling": {
			obj:  `{metadata: {generation: 2}, status: {observedGeneration: 1, conditions: [{type: Updated, status: "False", reason: Rolling, message: "rolling out revision web-2"}, ` + managed + `]}}`,
			want: health{"Progressing", "generation 2 is not fully in effect yet (observedGeneration 1): rolling out revision web-2"},
		},
		"TargetNotFound": {
			obj:  `{status: {conditions: [{type: Updated, status: "False", reason: TargetNotFound, message: "StatefulSet sample/web not found"}]}}`,
			want: health{"Degraded", "StatefulSet sample/web not found"},
		},
		"OnDelete": {
			obj:  `{status: {conditions: [{type: Updated, status: "False", reason: OnDeleteStrategy, message: "has updateStrategy.type OnDelete"}]}}`,
			want: health{"Degraded", "has updateStrategy.type OnDelete"},
		},
		"Conflict": {
			obj:  `{status: {conditions: [{type: Updated, status: "True", reason: Updated, message: "every pod runs revision web-1"}, {type: PartitionManaged, status: "False", reason: ConflictingFieldManager, message: "field manager \"helm\" also set the partition"}]}}`,
			want: health{"Degraded", `field manager "helm" also set the partition`},
		},
		"StandardRollingUpdate": {
			obj:  `{status: {conditions: [{type: Updated, status: "True", reason: Suspended, message: "standardRollingUpdate is true"}, ` + managed + `]}}`,
			want: health{"Suspended", "standardRollingUpdate is true"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, evaluate(t, script, tc.obj)); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEveryClaimKindHasAHealthCheck keeps the checks in step with the API:
// one per claim kind of v1alpha1.Composites, and no other.
func TestEveryClaimKindHasAHealthCheck(t *testing.T) {
	got := map[string]bool{}
	for k := range scripts(t) {
		got[k] = true
	}
	want := map[string]bool{}
	for _, k := range v1alpha1.Composites {
		want["resource.customizations.health."+k.Group+"_"+k.Claim] = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("health checks (-want +got):\n%s", diff)
	}
}
