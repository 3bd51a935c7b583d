package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
)

// structOf parses YAML into a protobuf Struct.
func structOf(t *testing.T, y string) *structpb.Struct {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runEngine(t *testing.T, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	t.Helper()
	c := engine.New(&fixedProber{}, fixedEvents{}, engine.WithClock(func() time.Time { return responseClock }))
	f := fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineKind: c})
	rsp, err := f.RunFunction(context.Background(), req)
	if err != nil {
		t.Fatalf("RunFunction: %v", err)
	}
	return rsp
}

// TestRunFunctionPodSecurity changes the spec of a stable engine so that it
// asks for something the pod-security policy governs. Refused, the engine
// stays on its serving generation exactly as without the change (nothing
// new rendered) and EngineReady says which field and which allow-list of
// the function input would permit it; allowed by the input, the next
// generation is rendered with it.
func TestRunFunctionPodSecurity(t *testing.T) {
	cases := map[string]struct {
		reason string
		// spec is merged over the stable engine's spec.
		spec string
		// podSecurity is the function input's spec.podSecurity.
		podSecurity string
		// refused is the EngineReady message, when refused.
		refused string
		// rendered is a fragment of the new StatefulSet's pod spec, when
		// allowed, and one it must not hold.
		rendered, absent string
	}{
		"NoSeccompProfileNoToken": {
			reason:   "The engine needs io_uring, which RuntimeDefault blocks on current runtimes: no profile, and no API token either.",
			spec:     `replicas: 3`,
			rendered: "automountServiceAccountToken: false\n",
			absent:   "seccompProfile",
		},
		"LocalhostSeccompProfileKept": {
			reason:   "A template's own profile, e.g. a node-local one that allows io_uring, is kept.",
			spec:     `template: {spec: {securityContext: {seccompProfile: {type: Localhost, localhostProfile: profiles/firebolt-engine.json}}, containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}]}}`,
			rendered: "seccompProfile:\n      localhostProfile: profiles/firebolt-engine.json\n      type: Localhost\n",
		},
		"HostPathVolumeRefused": {
			reason:  "A hostPath volume needs an allowedHostPaths prefix.",
			spec:    `template: {spec: {containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}], volumes: [{name: logs, hostPath: {path: /var/log}}]}}`,
			refused: `spec.template.spec.volumes[logs].hostPath.path: Forbidden: host path "/var/log" is not below any of the function input's spec.podSecurity.allowedHostPaths (none listed)`,
		},
		"HostPathVolumeAllowed": {
			reason:      "A prefix on a whole path segment allows the volume.",
			spec:        `template: {spec: {containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}], volumes: [{name: logs, hostPath: {path: /var/log/firebolt}}]}}`,
			podSecurity: `{allowedHostPaths: [/var/log]}`,
			rendered:    `path: /var/log/firebolt`,
		},
		"HostPathPrefixIsSegmentWise": {
			reason:      "/var/log does not allow /var/logs.",
			spec:        `template: {spec: {containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}], volumes: [{name: logs, hostPath: {path: /var/logs}}]}}`,
			podSecurity: `{allowedHostPaths: [/var/log]}`,
			refused:     `spec.template.spec.volumes[logs].hostPath.path: Forbidden: host path "/var/logs" is not below any of the function input's spec.podSecurity.allowedHostPaths (listed: /var/log)`,
		},
		"HostPathClimbingRefused": {
			reason:      "A path that climbs out of an allowed prefix is refused whatever it cleans to.",
			spec:        `template: {spec: {containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}], volumes: [{name: logs, hostPath: {path: /var/log/../../etc}}]}}`,
			podSecurity: `{allowedHostPaths: [/var/log]}`,
			refused:     `spec.template.spec.volumes[logs].hostPath.path: Forbidden: host path "/var/log/../../etc" is not below any of the function input's spec.podSecurity.allowedHostPaths (listed: /var/log)`,
		},
		"StorageHostPathRefused": {
			reason:  "spec.storage.hostPath is a hostPath volume too.",
			spec:    `storage: {hostPath: {path: /mnt/firebolt}}`,
			refused: `spec.storage.hostPath.path: Forbidden: host path "/mnt/firebolt" is not below any of the function input's spec.podSecurity.allowedHostPaths (none listed)`,
		},
		"StorageHostPathAllowed": {
			reason:      "An allowed prefix renders the data volume on the node.",
			spec:        `storage: {hostPath: {path: /mnt/firebolt}}`,
			podSecurity: `{allowedHostPaths: [/mnt]}`,
			rendered:    `path: /mnt/firebolt`,
		},
		"CapabilityRefused": {
			reason:  "Only NET_BIND_SERVICE may be added by default.",
			spec:    `template: {spec: {containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}, {name: debug, image: busybox, securityContext: {capabilities: {add: [NET_BIND_SERVICE, SYS_PTRACE]}}}]}}`,
			refused: `spec.template.spec.containers[debug].securityContext.capabilities.add[1]: Forbidden: capability SYS_PTRACE may be added only when listed in the function input's spec.podSecurity.allowedCapabilities (none listed; NET_BIND_SERVICE needs no listing)`,
		},
		"CapabilityWithPrefixRefused": {
			reason:      "The runtimes accept CAP_-prefixed and lower-case names, so they are compared as such.",
			spec:        `template: {spec: {containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}, {name: debug, image: busybox, securityContext: {capabilities: {add: [cap_sys_admin]}}}]}}`,
			podSecurity: `{allowedCapabilities: [SYS_PTRACE]}`,
			refused:     `spec.template.spec.containers[debug].securityContext.capabilities.add[0]: Forbidden: capability cap_sys_admin may be added only when listed in the function input's spec.podSecurity.allowedCapabilities (listed: SYS_PTRACE; NET_BIND_SERVICE needs no listing)`,
		},
		"CapabilityAllowed": {
			reason:      "A listed capability may be added.",
			spec:        `template: {spec: {containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}, {name: debug, image: busybox, securityContext: {capabilities: {add: [CAP_SYS_PTRACE]}}}]}}`,
			podSecurity: `{allowedCapabilities: [SYS_PTRACE]}`,
			rendered:    `- CAP_SYS_PTRACE`,
		},
		"ServiceAccountAllowedByDefault": {
			reason:   "Any ServiceAccount of the namespace, as for a pod author; the token is still not mounted.",
			spec:     `template: {spec: {serviceAccountName: engines, containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}]}}`,
			rendered: "automountServiceAccountToken: false\n",
		},
		"ServiceAccountNarrowed": {
			reason:      "The platform operator may narrow the ServiceAccounts.",
			spec:        `template: {spec: {serviceAccountName: admin, containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}]}}`,
			podSecurity: `{allowedServiceAccountNames: [engines]}`,
			refused:     `spec.template.spec.serviceAccountName: Forbidden: ServiceAccount "admin" is not in the function input's spec.podSecurity.allowedServiceAccountNames (listed: engines)`,
		},
		"TokenOfDefaultServiceAccountNarrowed": {
			reason:      "Asking for a token without naming a ServiceAccount mounts the default one's, which a narrowed list must hold.",
			spec:        `template: {spec: {automountServiceAccountToken: true, containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}]}}`,
			podSecurity: `{allowedServiceAccountNames: [engines]}`,
			refused:     `spec.template.spec.automountServiceAccountToken: Forbidden: ServiceAccount "default" is not in the function input's spec.podSecurity.allowedServiceAccountNames (listed: engines)`,
		},
		"TokenOfAllowedServiceAccount": {
			reason:      "A template that asks for the token of an allowed ServiceAccount gets it.",
			spec:        `template: {spec: {serviceAccountName: engines, automountServiceAccountToken: true, containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}]}}`,
			podSecurity: `{allowedServiceAccountNames: [engines]}`,
			rendered:    "automountServiceAccountToken: true\n",
		},
		"RootRefused": {
			reason:  "runAsUser 0 needs allowRunAsRoot.",
			spec:    `template: {spec: {securityContext: {runAsUser: 0}, containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29", securityContext: {runAsNonRoot: false}}]}}`,
			refused: `[spec.template.spec.securityContext.runAsUser: Forbidden: running as root (UID 0) needs the function input's spec.podSecurity.allowRunAsRoot: true, spec.template.spec.containers[engine].securityContext.runAsNonRoot: Forbidden: false needs the function input's spec.podSecurity.allowRunAsRoot: true]`,
		},
		"RootAllowed": {
			reason:      "allowRunAsRoot lets a template run as root.",
			spec:        `template: {spec: {securityContext: {runAsUser: 0}, containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}]}}`,
			podSecurity: `{allowRunAsRoot: true}`,
			rendered:    "runAsUser: 0\n",
		},
		"PrivilegedRefusedWhateverTheInput": {
			reason:      "What no input may allow is refused by the function too, should a composite get past admission.",
			spec:        `template: {spec: {containers: [{name: engine, image: "ghcr.io/firebolt-db/engine:4.29"}, {name: debug, image: busybox, securityContext: {privileged: true}}]}}`,
			podSecurity: `{allowedCapabilities: [ALL], allowRunAsRoot: true, allowedHostPaths: [/]}`,
			refused:     `spec.template.spec.containers[debug].securityContext.privileged: Forbidden: refused on every Composition (Pod Security Standards baseline)`,
		},
	}

	baseline := runEngine(t, loadRequest(t, "stable"))
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := loadRequest(t, "stable")
			spec := req.GetObserved().GetComposite().GetResource().GetFields()["spec"].GetStructValue()
			for k, v := range structOf(t, tc.spec).GetFields() {
				spec.Fields[k] = v
			}
			if tc.podSecurity != "" {
				req.Input = structOf(t, "apiVersion: firebolt.fn.crossplane.io/v1beta1\nkind: Input\nspec: {podSecurity: "+tc.podSecurity+"}")
			}
			rsp := runEngine(t, req)
			// A change is rendered on the call after the one that moves to
			// creating: feed the published status back, as Crossplane does.
			status := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"]
			req.GetObserved().GetComposite().GetResource().GetFields()["status"] = status
			rsp = runEngine(t, req)

			var ready *fnv1.Condition
			for _, c := range rsp.GetConditions() {
				if c.GetType() == engine.TypeEngineReady {
					ready = c
				}
			}
			_, g1 := rsp.GetDesired().GetResources()["g1-statefulset"]
			if tc.refused != "" {
				if ready.GetReason() != engine.ReasonTemplateRejected || ready.GetMessage() != tc.refused {
					t.Errorf("%s\nEngineReady: want TemplateRejected %q, got %s %q", tc.reason, tc.refused, ready.GetReason(), ready.GetMessage())
				}
				// Nothing new: the serving generation's objects exactly as
				// without the change.
				if diff := cmp.Diff(baseline.GetDesired().GetResources(), rsp.GetDesired().GetResources(), protocmp.Transform()); diff != "" {
					t.Errorf("%s\ndesired resources: -unchanged engine, +refused change:\n%s", tc.reason, diff)
				}
				return
			}
			if !g1 {
				t.Fatalf("%s\nno new generation rendered; EngineReady %s %q", tc.reason, ready.GetReason(), ready.GetMessage())
			}
			y, err := yaml.Marshal(rsp.GetDesired().GetResources()["g1-statefulset"].GetResource().AsMap()["spec"].(map[string]any)["template"])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(y), tc.rendered) {
				t.Errorf("%s\nrendered pod template lacks %q:\n%s", tc.reason, tc.rendered, y)
			}
			if tc.absent != "" && strings.Contains(string(y), tc.absent) {
				t.Errorf("%s\nrendered pod template holds %q:\n%s", tc.reason, tc.absent, y)
			}
		})
	}
}
