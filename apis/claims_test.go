package apis_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// set stores v at the dot-separated path p of m, creating objects on the
// way; a segment "name[i]" addresses list element i.
func set(m map[string]any, p string, v any) map[string]any {
	segs := strings.Split(p, ".")
	cur := m
	for i, s := range segs {
		last := i == len(segs)-1
		name, idx := s, -1
		if j := strings.Index(s, "["); j > 0 {
			name = s[:j]
			idx = atoi(s[j+1 : len(s)-1])
		}
		if idx >= 0 {
			l, _ := cur[name].([]any)
			for len(l) <= idx {
				l = append(l, map[string]any{})
			}
			cur[name] = l
			if last {
				l[idx] = v
				return m
			}
			cur = l[idx].(map[string]any) //nolint:forcetypeassert // Test helper on known shapes.
			continue
		}
		if last {
			cur[name] = v
			return m
		}
		next, ok := cur[name].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[name] = next
		}
		cur = next
	}
	return m
}

// del removes the dot-separated path p from m.
func del(m map[string]any, p string) map[string]any {
	segs := strings.Split(p, ".")
	cur := m
	for _, s := range segs[:len(segs)-1] {
		cur = cur[s].(map[string]any) //nolint:forcetypeassert // Test helper on known shapes.
	}
	delete(cur, segs[len(segs)-1])
	return m
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

type claimCase struct {
	reason string
	kind   string
	obj    func(t *testing.T) map[string]any
	// old, when set, makes the case an update from old to obj.
	old     func(t *testing.T) map[string]any
	errors  []string
	unknown []string
}

// runClaims admits each case's object as a claim and as the composite
// Crossplane makes of it, and wants the same verdict from both.
func runClaims(t *testing.T, cases map[string]claimCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := serversFor(t, tc.kind)
			for _, v := range []struct {
				name string
				srv  *server
				conv func(map[string]any) map[string]any
			}{
				{"claim", s.claim, func(m map[string]any) map[string]any { return m }},
				{"composite", s.composite, asComposite},
			} {
				var old map[string]any
				if tc.old != nil {
					old = v.conv(tc.old(t))
				}
				got := v.srv.admit(v.conv(tc.obj(t)), old)
				if diff := cmp.Diff(tc.errors, got.Errors); diff != "" {
					t.Errorf("%s\n%s errors: -want, +got:\n%s", tc.reason, v.name, diff)
				}
				if diff := cmp.Diff(tc.unknown, got.Unknown); diff != "" {
					t.Errorf("%s\n%s unknown fields: -want, +got:\n%s", tc.reason, v.name, diff)
				}
			}
		})
	}
}

// asComposite turns a claim into the composite kind, cluster-scoped.
func asComposite(m map[string]any) map[string]any {
	m["kind"] = "X" + m["kind"].(string) //nolint:forcetypeassert // Test manifests always have a kind.
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "namespace")
	}
	return m
}

func ex(file string, muts ...func(map[string]any) map[string]any) func(t *testing.T) map[string]any {
	return func(t *testing.T) map[string]any {
		t.Helper()
		m := example(t, file)
		for _, f := range muts {
			m = f(m)
		}
		return m
	}
}

// setf sets p to a fresh copy of v each time: admission prunes and
// defaults in place, and a case runs more than once.
func setf(p string, v any) func(map[string]any) map[string]any {
	return func(m map[string]any) map[string]any { return set(m, p, runtime.DeepCopyJSONValue(v)) }
}

func delf(p string) func(map[string]any) map[string]any {
	return func(m map[string]any) map[string]any { return del(m, p) }
}

func obj(y string) map[string]any {
	m, err := decode(y)
	if err != nil {
		panic(err)
	}
	return m
}

func TestEngineClaims(t *testing.T) {
	const kind = "FireboltEngine"
	e := func(muts ...func(map[string]any) map[string]any) func(t *testing.T) map[string]any {
		return ex("engine.yaml", muts...)
	}
	runClaims(t, map[string]claimCase{
		"Example": {
			reason: "The example engine is valid.",
			kind:   kind, obj: e(),
		},
		"Unchanged": {
			reason: "An update that changes nothing passes every transition rule.",
			kind:   kind, obj: e(), old: e(),
		},
		"InstanceRefChanged": {
			reason: "instanceRef is immutable.",
			kind:   kind, obj: e(setf("spec.instanceRef", "other")), old: e(),
			errors: []string{`spec.instanceRef: Invalid value: "other": spec.instanceRef is immutable`},
		},
		"MetadataEndpointOverrideAdded": {
			reason: "metadataEndpointOverride may be set when it was unset.",
			kind:   kind, obj: e(setf("spec.metadataEndpointOverride", "meta.example.com:7000")), old: e(),
		},
		"MetadataEndpointOverrideCleared": {
			reason: "metadataEndpointOverride may not be cleared once set.",
			kind:   kind, obj: e(), old: e(setf("spec.metadataEndpointOverride", "meta.example.com:7000")),
			errors: []string{`spec: Invalid value: spec.metadataEndpointOverride is immutable once set`},
		},
		"MetadataEndpointOverrideChanged": {
			reason: "metadataEndpointOverride may not change once set.",
			kind:   kind,
			obj:    e(setf("spec.metadataEndpointOverride", "other.example.com:7000")),
			old:    e(setf("spec.metadataEndpointOverride", "meta.example.com:7000")),
			errors: []string{`spec: Invalid value: spec.metadataEndpointOverride is immutable once set`},
		},
		"TwoStorageBackends": {
			reason: "Storage backends are mutually exclusive.",
			kind:   kind,
			obj:    e(setf("spec.storage.emptyDir", map[string]any{}), setf("spec.storage.hostPath.path", "/mnt/firebolt")),
			errors: []string{`spec.storage: Invalid value: spec.storage: persistentVolumeClaim, emptyDir and hostPath are mutually exclusive`},
		},
		"EngineClassRefAtTheLimit": {
			reason: "A class name as long as Crossplane admits for a claim.",
			kind:   kind, obj: e(setf("spec.engineClassRef", strings.Repeat("c", 63))),
		},
		"EngineClassRefTooLong": {
			reason: "No class can have a longer name, and the engine's Usage of it carries it as a label value.",
			kind:   kind, obj: e(setf("spec.engineClassRef", strings.Repeat("c", 64))),
			errors: []string{`spec.engineClassRef: Too long: may not be more than 63 bytes`},
		},
		"OneStorageBackend": {
			reason: "One backend is fine.",
			kind:   kind, obj: e(setf("spec.storage.persistentVolumeClaim.storageClassName", "fast")),
		},
		"AutoStopEnabled": {
			reason: "Auto-stop is enabled with the original's fields.",
			kind:   kind, obj: e(setf("spec.autoStop", map[string]any{"enabled": true, "activeReplicas": int64(2)})),
		},
		"AutoStopDisabled": {
			reason: "The original's manifests with a disabled autoStop still apply.",
			kind:   kind, obj: e(setf("spec.autoStop", map[string]any{
				"enabled": false, "activeReplicas": int64(2), "idleReplicas": int64(1), "idleTimeout": "1h",
				"schedule": []any{map[string]any{"start": "08:00", "end": "18:00", "days": []any{"Mon", "Fri"}}},
			})),
		},
		"AutoStopIdleAboveActive": {
			reason: "activeReplicas >= idleReplicas holds even while disabled.",
			kind:   kind, obj: e(setf("spec.autoStop", map[string]any{"activeReplicas": int64(1), "idleReplicas": int64(2)})),
			errors: []string{`spec.autoStop: Invalid value: spec.autoStop.activeReplicas must be greater than or equal to spec.autoStop.idleReplicas`},
		},
		"DrainCheckIntervalValid": {
			reason: "A Go duration string is accepted.",
			kind:   kind, obj: e(setf("spec.drainCheckInterval", "1m30s")),
		},
		"DrainCheckIntervalNotADuration": {
			reason: "A string that is not a duration is refused at admission, not left for the function to choke on.",
			kind:   kind, obj: e(setf("spec.drainCheckInterval", "5 seconds")),
			errors: []string{`spec.drainCheckInterval: Invalid value: "string": type conversion error from 'string' to 'google.protobuf.Duration' evaluating rule: must be a duration of at least 1s, such as 5s or 1m30s`},
		},
		"DrainCheckIntervalZero": {
			reason: "A zero interval would poll without pause.",
			kind:   kind, obj: e(setf("spec.drainCheckInterval", "0s")),
			errors: []string{`spec.drainCheckInterval: Invalid value: "0s": must be a duration of at least 1s, such as 5s or 1m30s`},
		},
		"DrainCheckIntervalBelowOneSecond": {
			reason: "Every poll scrapes every pod of the old generation; more than one a second per engine is refused.",
			kind:   kind, obj: e(setf("spec.drainCheckInterval", "999ms")),
			errors: []string{`spec.drainCheckInterval: Invalid value: "999ms": must be a duration of at least 1s, such as 5s or 1m30s`},
		},
		"DrainCheckIntervalOneSecond": {
			reason: "The minimum itself is accepted.",
			kind:   kind, obj: e(setf("spec.drainCheckInterval", "1s")),
		},
		"AutoStopPollIntervalBelowOneSecond": {
			reason: "Every poll is a function call and a scrape of every pod; more than one a second per engine is refused, as for drainCheckInterval.",
			kind:   kind, obj: e(setf("spec.autoStop", map[string]any{"activeReplicas": int64(1), "pollInterval": "999ms"})),
			errors: []string{`spec.autoStop.pollInterval: Invalid value: "999ms": must be a duration of at least 1s, such as 5s or 1m30s`},
		},
		"AutoStopPollIntervalOneSecond": {
			reason: "The minimum itself is accepted.",
			kind:   kind, obj: e(setf("spec.autoStop", map[string]any{"activeReplicas": int64(1), "pollInterval": "1s"})),
		},
		"AutoStopIdleTimeoutZero": {
			reason: "An engine cannot be idle for no time.",
			kind:   kind, obj: e(setf("spec.autoStop", map[string]any{"activeReplicas": int64(1), "idleTimeout": "0s"})),
			errors: []string{`spec.autoStop.idleTimeout: Invalid value: "0s": must be a positive duration such as 5s or 1m30s`},
		},
		"AutoStopWindowNotATime": {
			reason: "Windows are HH:MM.",
			kind:   kind, obj: e(setf("spec.autoStop", map[string]any{"activeReplicas": int64(1), "schedule": []any{map[string]any{"start": "24:00", "end": "08:00"}}})),
			errors: []string{`spec.autoStop.schedule[0].start: Invalid value: "24:00": spec.autoStop.schedule[0].start in body should match '^([01]\d|2[0-3]):[0-5]\d$'`},
		},
		"AutoStopWindowUnknownDay": {
			reason: "Days are the original's three-letter names.",
			kind:   kind, obj: e(setf("spec.autoStop", map[string]any{"activeReplicas": int64(1), "schedule": []any{map[string]any{"start": "22:00", "end": "02:00", "days": []any{"Monday"}}}})),
			errors: []string{`spec.autoStop.schedule[0].days[0]: Unsupported value: "Monday": supported values: "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"`},
		},
		"WrongFieldType": {
			reason: "A wrong field type is a schema error.",
			kind:   kind, obj: e(setf("spec.replicas", "two")),
			errors: []string{`spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`},
		},
		"UnknownField": {
			reason: "An unknown field is pruned and reported, as strict field validation does.",
			kind:   kind, obj: e(setf("spec.replica", int64(3))),
			unknown: []string{"spec.replica"},
		},
		"BadRollout": {
			reason: "rollout is an enum.",
			kind:   kind, obj: e(setf("spec.rollout", "bluegreen")),
			errors: []string{`spec.rollout: Unsupported value: "bluegreen": supported values: "graceful", "recreate", "phased"`},
		},
		"NegativeReplicas": {
			reason: "replicas has a minimum of 0.",
			kind:   kind, obj: e(setf("spec.replicas", int64(-1))),
			errors: []string{`spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0`},
		},
		"ReplicasAtTheMaximum": {
			reason: "replicas may reach the maximum the function renders.",
			kind:   kind, obj: e(setf("spec.replicas", int64(v1alpha1.MaxEngineReplicas))),
		},
		"ReplicasAboveTheMaximum": {
			reason: "Above the maximum the ConfigMap's node list outgrows what the function renders.",
			kind:   kind, obj: e(setf("spec.replicas", int64(v1alpha1.MaxEngineReplicas+1))),
			errors: []string{`spec.replicas: Invalid value: 1001: spec.replicas in body should be less than or equal to 1000`},
		},
		"ReplicasMaxInt32": {
			reason: "The largest int32 is refused, not left to the function to allocate.",
			kind:   kind, obj: e(setf("spec.replicas", int64(2147483647))),
			errors: []string{`spec.replicas: Invalid value: 2147483647: spec.replicas in body should be less than or equal to 1000`},
		},
		"AutoStopReplicasAboveTheMaximum": {
			reason: "autoStop's replica counts would become spec.replicas: the same maximum applies.",
			kind:   kind, obj: e(setf("spec.autoStop", map[string]any{"activeReplicas": int64(1001), "idleReplicas": int64(1001)})),
			errors: []string{
				`spec.autoStop.activeReplicas: Invalid value: 1001: spec.autoStop.activeReplicas in body should be less than or equal to 1000`,
				`spec.autoStop.idleReplicas: Invalid value: 1001: spec.autoStop.idleReplicas in body should be less than or equal to 1000`,
			},
		},
		"MissingInstanceRef": {
			reason: "instanceRef is required.",
			kind:   kind, obj: e(delf("spec.instanceRef")),
			errors: []string{`spec.instanceRef: Required value`},
		},
		"TerminationGracePeriod": {
			reason: "Pod-level operator-owned fields are rejected with their path.",
			kind:   kind, obj: e(setf("spec.template.spec.terminationGracePeriodSeconds", int64(30))),
			errors: []string{`spec.template.spec: Invalid value: spec.template.spec.terminationGracePeriodSeconds is operator-owned and must not be set`},
		},
		"HostNetworkFalse": {
			reason: "A bool left at false is unset, as for the original.",
			kind:   kind, obj: e(setf("spec.template.spec.hostNetwork", false)),
		},
		"HostNetworkTrue": {
			reason: "hostNetwork is operator-owned.",
			kind:   kind, obj: e(setf("spec.template.spec.hostNetwork", true)),
			errors: []string{`spec.template.spec: Invalid value: spec.template.spec.hostNetwork is operator-owned and must not be set`},
		},
		"TemplateName": {
			reason: "Template metadata may carry only labels and annotations.",
			kind:   kind, obj: e(setf("spec.template.metadata.name", "pod")),
			errors: []string{`spec.template.metadata: Invalid value: spec.template.metadata.name is operator-owned and must not be set`},
		},
		"OperatorLabel": {
			reason: "firebolt.io/ labels are the operator's.",
			kind:   kind, obj: e(setf("spec.template.metadata.labels", map[string]any{"firebolt.io/generation": "7"})),
			errors: []string{`spec.template.metadata: Invalid value: spec.template.metadata.labels: keys with prefix firebolt.io/ are operator-owned and must not be set`},
		},
		"OperatorAnnotation": {
			reason: "firebolt.io/ annotations are the operator's.",
			kind:   kind, obj: e(setf("spec.template.metadata.annotations", map[string]any{"firebolt.io/config-hash": "x"})),
			errors: []string{`spec.template.metadata: Invalid value: spec.template.metadata.annotations: keys with prefix firebolt.io/ are operator-owned and must not be set`},
		},
		"PrimaryCommand": {
			reason: "The engine container's command is operator-owned.",
			kind:   kind, obj: e(setf("spec.template.spec.containers[0].command", []any{"sleep"})),
			errors: []string{`spec.template.spec.containers: Invalid value: spec.template.spec.containers[engine].command is operator-owned and must not be set`},
		},
		"SidecarCommand": {
			reason: "Sidecars may set their own command.",
			kind:   kind, obj: e(setf("spec.template.spec.containers[1]", map[string]any{"name": "shipper", "image": "busybox", "command": []any{"sleep"}})),
		},
		"ReservedContainer": {
			reason: "engine-web is the operator's UI sidecar.",
			kind:   kind, obj: e(setf("spec.template.spec.containers[1]", map[string]any{"name": "engine-web", "image": "nginx"})),
			errors: []string{`spec.template.spec.containers: Invalid value: spec.template.spec.containers: name engine-web is reserved for the operator's container`},
		},
		"InitContainerNamedEngine": {
			reason: "No init container may take the primary's name.",
			kind:   kind, obj: e(setf("spec.template.spec.initContainers[0]", map[string]any{"name": "engine", "image": "busybox"})),
			errors: []string{`spec.template.spec.initContainers: Invalid value: spec.template.spec.initContainers: name engine is the primary container's and must not be used`},
		},
		"NoContainers": {
			reason: "A template need not list containers: it is a fragment.",
			kind:   kind, obj: e(setf("spec.template", map[string]any{"spec": map[string]any{"priorityClassName": "high"}})),
		},
		"NullCreationTimestamp": {
			reason: "kubectl-style creationTimestamp: null is dropped, not rejected.",
			kind:   kind, obj: e(setf("spec.template.metadata.creationTimestamp", nil)),
		},
	})
}

func TestEngineClassClaims(t *testing.T) {
	const kind = "FireboltEngineClass"
	c := func(muts ...func(map[string]any) map[string]any) func(t *testing.T) map[string]any {
		return ex("engineclass.yaml", muts...)
	}
	runClaims(t, map[string]claimCase{
		"Example": {
			reason: "The example class is valid.",
			kind:   kind, obj: c(),
		},
		"MissingTemplate": {
			reason: "A class must have a template.",
			kind:   kind, obj: c(delf("spec.template")),
			errors: []string{`spec.template: Required value`},
		},
		"TwoStorageBackends": {
			reason: "Storage backends are mutually exclusive on classes too.",
			kind:   kind, obj: c(setf("spec.storage.persistentVolumeClaim", map[string]any{})),
			errors: []string{`spec.storage: Invalid value: spec.storage: persistentVolumeClaim, emptyDir and hostPath are mutually exclusive`},
		},
		"AutoStopEnabled": {
			reason: "Classes carry auto-stop for their engines.",
			kind:   kind, obj: c(setf("spec.autoStop", map[string]any{"enabled": true, "activeReplicas": int64(1), "pollInterval": "30s"})),
		},
		"AutoStopPollIntervalTooShort": {
			reason: "A poll under a second would be a hot loop of calls and scrapes.",
			kind:   kind, obj: c(setf("spec.autoStop", map[string]any{"enabled": true, "activeReplicas": int64(1), "pollInterval": "500ms"})),
			errors: []string{`spec.autoStop.pollInterval: Invalid value: "500ms": must be a duration of at least 1s, such as 5s or 1m30s`},
		},
		"Hostname": {
			reason: "Class templates follow the engine's rules.",
			kind:   kind, obj: c(setf("spec.template.spec.hostname", "engine")),
			errors: []string{`spec.template.spec: Invalid value: spec.template.spec.hostname is operator-owned and must not be set`},
		},
		"PrimaryProbe": {
			reason: "Probes of the engine container are operator-owned.",
			kind:   kind, obj: c(setf("spec.template.spec.containers[0].readinessProbe", map[string]any{"tcpSocket": map[string]any{"port": int64(3473)}})),
			errors: []string{`spec.template.spec.containers: Invalid value: spec.template.spec.containers[engine].readinessProbe is operator-owned and must not be set`},
		},
		"AutoStopReplicasAboveTheMaximum": {
			reason: "A class's autoStop replica counts have the engine's maximum.",
			kind:   kind, obj: c(setf("spec.autoStop", map[string]any{"activeReplicas": int64(v1alpha1.MaxEngineReplicas + 1)})),
			errors: []string{`spec.autoStop.activeReplicas: Invalid value: 1001: spec.autoStop.activeReplicas in body should be less than or equal to 1000`},
		},
		"PrimaryTwice": {
			reason: "The engine container appears at most once.",
			kind:   kind, obj: c(setf("spec.template.spec.containers[1]", map[string]any{"name": "engine"})),
			errors: []string{`spec.template.spec.containers: Invalid value: spec.template.spec.containers: container engine may appear only once`},
		},
		"DrainCheckIntervalBelowOneSecond": {
			reason: "The class's default interval has the engine's minimum.",
			kind:   kind, obj: c(setf("spec.drainCheckInterval", "100ms")),
			errors: []string{`spec.drainCheckInterval: Invalid value: "100ms": must be a duration of at least 1s, such as 5s or 1m30s`},
		},
		"DrainCheckIntervalOneSecond": {
			reason: "The minimum itself is accepted on classes.",
			kind:   kind, obj: c(setf("spec.drainCheckInterval", "1s")),
		},
	})
}

func TestInstanceClaims(t *testing.T) {
	const kind = "FireboltInstance"
	i := func(muts ...func(map[string]any) map[string]any) func(t *testing.T) map[string]any {
		return ex("instance.yaml", muts...)
	}
	runClaims(t, map[string]claimCase{
		"Example": {
			reason: "The example instance is valid.",
			kind:   kind, obj: i(),
		},
		"IDSet": {
			reason: "spec.id may go from empty to a value.",
			kind:   kind, obj: i(setf("spec.id", "01JC7Q3X9Z")), old: i(),
		},
		"IDSetFromEmptyString": {
			reason: "spec.id may go from '' to a value.",
			kind:   kind, obj: i(setf("spec.id", "01JC7Q3X9Z")), old: i(setf("spec.id", "")),
		},
		"IDChanged": {
			reason: "spec.id may change at admission, which cannot see the id in use; the function never switches an account in use, and a spec.id corrected to status.id must apply.",
			kind:   kind, obj: i(setf("spec.id", "01KYYC8A80558KKP6M99KQ0AVJ")), old: i(setf("spec.id", "01JC7Q3X9Z")),
		},
		"IDCleared": {
			reason: "spec.id may be removed; the account in use stays.",
			kind:   kind, obj: i(), old: i(setf("spec.id", "01JC7Q3X9Z")),
		},
		"MetadataReplicas": {
			reason: "The metadata service runs exactly one replica.",
			kind:   kind, obj: i(setf("spec.metadata.replicas", int64(2))),
			errors: []string{`spec.metadata: Invalid value: spec.metadata.replicas must be 1`},
		},
		"EngineRegistration": {
			reason: "engineRegistration is accepted, as the original accepts it; it has no effect yet and a condition says so.",
			kind:   kind, obj: i(setf("spec.metadata.engineRegistration", true)),
		},
		"OriginalInstanceFull": {
			reason: "An instance shaped as the original's examples/instance-full.yaml (external PostgreSQL, engineRegistration, metadata and gateway templates) applies as a claim.",
			kind:   kind, obj: func(t *testing.T) map[string]any {
				return originalExamples(t)["instance-external-postgres.yaml/FireboltInstance/central"]
			},
		},
		"EngineRegistrationFalse": {
			reason: "A disabled engineRegistration applies.",
			kind:   kind, obj: i(setf("spec.metadata.engineRegistration", false)),
		},
		"AuthEnabledWithoutLocal": {
			reason: "An enabled auth needs the local authorization server (apis/auth_test.go has the rest).",
			kind:   kind, obj: i(setf("spec.auth.enabled", true)),
			errors: []string{`spec.auth: Invalid value: spec.auth.local is required when spec.auth.enabled is true`},
		},
		"AuthDisabled": {
			reason: "A disabled auth applies.",
			kind:   kind, obj: i(setf("spec.auth.enabled", false)),
		},
		"AuthDisabledWithLocal": {
			reason: "Settings of a disabled auth are refused, not silently ignored.",
			kind:   kind, obj: i(setf("spec.auth", map[string]any{"enabled": false, "local": map[string]any{
				"admin": map[string]any{"password": map[string]any{"name": "admin", "key": "password"}},
			}})),
			errors: []string{
				`spec.auth.local: Invalid value: spec.auth.local.signingKeys is required: the keys engines sign tokens with`,
				`spec.auth: Invalid value: spec.auth.local, spec.auth.oidc and spec.auth.preferredAuthorizationServer must be unset while spec.auth.enabled is false`,
			},
		},
		"GatewayTLSWithoutCertificate": {
			reason: "An enabled gateway listener needs a certificate: cert-manager's or a Secret.",
			kind:   kind, obj: i(setf("spec.tls.gateway.enabled", true)),
			errors: []string{`spec.tls.gateway: Invalid value: spec.tls.gateway: exactly one of certManager and secretRef is required when enabled is true`},
		},
		"GatewayTLSBothCertificates": {
			reason: "certManager and secretRef exclude each other.",
			kind:   kind, obj: i(setf("spec.tls.gateway", map[string]any{"enabled": true,
				"certManager": map[string]any{"issuerRef": map[string]any{"name": "ca"}}, "secretRef": map[string]any{"name": "mine"}})),
			errors: []string{`spec.tls.gateway: Invalid value: spec.tls.gateway: exactly one of certManager and secretRef is required when enabled is true`},
		},
		"GatewayMutualTLS": {
			reason: "cert-manager's certificate, a client CA, a CRL and extra names apply.",
			kind:   kind, obj: i(setf("spec.tls.gateway", map[string]any{"enabled": true,
				"certManager":       map[string]any{"issuerRef": map[string]any{"name": "ca"}, "algorithm": "RSA", "size": int64(4096)},
				"clientCASecretRef": map[string]any{"name": "clients"}, "crlSecretRef": map[string]any{"name": "crl"},
				"dnsNames": []any{"firebolt.example.com", "*.query.example.com"}})),
		},
		"GatewayTLSOwnSecret": {
			reason: "A Secret of the user's applies.",
			kind:   kind, obj: i(setf("spec.tls.gateway", map[string]any{"enabled": true, "secretRef": map[string]any{"name": "mine"}})),
		},
		"GatewayCRLWithoutCA": {
			reason: "A CRL revokes client certificates, which only mutual TLS asks for.",
			kind:   kind, obj: i(setf("spec.tls.gateway", map[string]any{"enabled": true, "secretRef": map[string]any{"name": "mine"}, "crlSecretRef": map[string]any{"name": "crl"}})),
			errors: []string{`spec.tls.gateway: Invalid value: spec.tls.gateway.crlSecretRef: a CRL needs clientCASecretRef: it revokes client certificates, which are only asked for with mutual TLS`},
		},
		"GatewayDisabledWithClientCA": {
			reason: "Settings of a disabled listener are refused, not silently ignored.",
			kind:   kind, obj: i(setf("spec.tls.gateway", map[string]any{"enabled": false, "clientCASecretRef": map[string]any{"name": "clients"}})),
			errors: []string{`spec.tls.gateway: Invalid value: spec.tls.gateway: clientCASecretRef and crlSecretRef must be unset while enabled is false`},
		},
		"GatewayMintedSecret": {
			reason: "A Secret the product mints cannot be named as the user's.",
			kind:   kind, obj: i(setf("spec.tls.gateway", map[string]any{"enabled": true, "secretRef": map[string]any{"name": "demo-auth-signing-signing-2"}})),
			errors: []string{`spec.tls.gateway.secretRef: Invalid value: secretRef.name must not name a Secret this product mints (<instance>-auth-signing…, <engine>-g<N>-engine-tls)`},
		},
		"GatewayBadDNSName": {
			reason: "dnsNames are DNS names.",
			kind:   kind, obj: i(setf("spec.tls.gateway", map[string]any{"enabled": true, "secretRef": map[string]any{"name": "mine"}, "dnsNames": []any{"Not A Name"}})),
			errors: []string{`spec.tls.gateway.dnsNames[0]: Invalid value: "Not A Name": spec.tls.gateway.dnsNames[0] in body should match '^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'`},
		},
		"EngineTLSEnabled": {
			reason: "Engine TLS with a certManager issuer applies.",
			kind:   kind, obj: i(setf("spec.tls.engine", map[string]any{"enabled": true, "certManager": map[string]any{"issuerRef": map[string]any{"name": "ca"}}})),
		},
		"EngineTLSWithoutCertManager": {
			reason: "Engines get their certificates from cert-manager; enabled without an issuer cannot render.",
			kind:   kind, obj: i(setf("spec.tls.engine", map[string]any{"enabled": true})),
			errors: []string{`spec.tls.engine: Invalid value: spec.tls.engine.certManager: required when enabled is true: each engine generation gets its certificate from it`},
		},
		"EngineCRLWhileDisabled": {
			reason: "Settings of a disabled listener are refused, not silently ignored.",
			kind:   kind, obj: i(setf("spec.tls.engine", map[string]any{"enabled": false, "crlSecretRef": map[string]any{"name": "crl"}})),
			errors: []string{`spec.tls.engine: Invalid value: spec.tls.engine.crlSecretRef: must be unset while enabled is false`},
		},
		"EngineIssuerFrozen": {
			reason: "Generations serving certificates of the old issuer would lose the gateway's trust.",
			kind:   kind,
			obj:    i(setf("spec.tls.engine", map[string]any{"enabled": true, "certManager": map[string]any{"issuerRef": map[string]any{"name": "other"}}})),
			old:    i(setf("spec.tls.engine", map[string]any{"enabled": true, "certManager": map[string]any{"issuerRef": map[string]any{"name": "ca"}}})),
			errors: []string{`spec.tls.engine: Invalid value: spec.tls.engine.certManager.issuerRef: cannot change while engine TLS stays enabled: generations serving certificates of the old issuer would lose the gateway's trust; disable engine TLS, or keep the issuer`},
		},
		"EngineIssuerKindFrozen": {
			reason: "The kind is part of the issuer; its default counts as set.",
			kind:   kind,
			obj:    i(setf("spec.tls.engine", map[string]any{"enabled": true, "certManager": map[string]any{"issuerRef": map[string]any{"name": "ca", "kind": "Issuer"}}})),
			old:    i(setf("spec.tls.engine", map[string]any{"enabled": true, "certManager": map[string]any{"issuerRef": map[string]any{"name": "ca"}}})),
			errors: []string{`spec.tls.engine: Invalid value: spec.tls.engine.certManager.issuerRef: cannot change while engine TLS stays enabled: generations serving certificates of the old issuer would lose the gateway's trust; disable engine TLS, or keep the issuer`},
		},
		"EngineIssuerChangesWhileDisabled": {
			reason: "The freeze holds only while engine TLS stays enabled.",
			kind:   kind,
			obj:    i(setf("spec.tls.engine", map[string]any{"enabled": true, "certManager": map[string]any{"issuerRef": map[string]any{"name": "other"}}})),
			old:    i(setf("spec.tls.engine", map[string]any{"enabled": false, "certManager": map[string]any{"issuerRef": map[string]any{"name": "ca"}}})),
		},
		"EngineAlgorithmChanges": {
			reason: "Key algorithm and size roll new generations; they may change.",
			kind:   kind,
			obj:    i(setf("spec.tls.engine", map[string]any{"enabled": true, "certManager": map[string]any{"issuerRef": map[string]any{"name": "ca"}, "algorithm": "RSA", "size": int64(2048)}})),
			old:    i(setf("spec.tls.engine", map[string]any{"enabled": true, "certManager": map[string]any{"issuerRef": map[string]any{"name": "ca"}}})),
		},
		"EngineSecretRef": {
			reason: "Engines get a certificate per generation; a Secret of the user's is a gateway setting.",
			kind:   kind, obj: i(setf("spec.tls.engine", map[string]any{"secretRef": map[string]any{"name": "mine"}})),
			errors: []string{`spec.tls.engine: Invalid value: spec.tls.engine: secretRef, clientCASecretRef and dnsNames are gateway settings; engines get a certificate per generation from certManager`},
		},
		"TLSDisabled": {
			reason: "Disabled listeners apply.",
			kind:   kind, obj: i(setf("spec.tls", map[string]any{"gateway": map[string]any{"enabled": false}, "engine": map[string]any{"enabled": false}})),
		},
		"ScrapeMode": {
			reason: "metricScrapeMode is an enum.",
			kind:   kind, obj: i(setf("spec.metricScrapeMode", "Direct")),
			errors: []string{`spec.metricScrapeMode: Unsupported value: "Direct": supported values: "PodIP", "ApiserverProxy"`},
		},
		"GatewayEnv": {
			reason: "The envoy container may set only image, pull policy and resources.",
			kind:   kind, obj: i(setf("spec.gateway.template.spec.containers[0]", map[string]any{"name": "envoy", "env": []any{map[string]any{"name": "A", "value": "b"}}})),
			errors: []string{`spec.gateway.template.spec.containers: Invalid value: spec.gateway.template.spec.containers[envoy].env is operator-owned and must not be set`},
		},
		"GatewayResources": {
			reason: "Image and resources on envoy are the user's.",
			kind:   kind, obj: i(setf("spec.gateway.template.spec.containers[0]", map[string]any{
				"name": "envoy", "image": "envoyproxy/envoy:v1.36.2", "imagePullPolicy": "IfNotPresent",
				"resources": map[string]any{"limits": map[string]any{"memory": "512Mi"}},
			})),
		},
		"WakeAgent": {
			reason: "wake-agent is reserved on the gateway.",
			kind:   kind, obj: i(setf("spec.gateway.template.spec.initContainers[0]", map[string]any{"name": "wake-agent"})),
			errors: []string{`spec.gateway.template.spec.initContainers: Invalid value: spec.gateway.template.spec.initContainers: name wake-agent is reserved for the operator's container`},
		},
		"MetadataCommand": {
			reason: "The metadata container's command is operator-owned.",
			kind:   kind, obj: i(setf("spec.metadata.template.spec.containers[0]", map[string]any{"name": "metadata", "command": []any{"sh"}})),
			errors: []string{`spec.metadata.template.spec.containers: Invalid value: spec.metadata.template.spec.containers[metadata].command is operator-owned and must not be set`},
		},
		"MetadataTemplateLabels": {
			reason: "Labels and scheduling on the metadata template are the user's.",
			kind:   kind, obj: i(setf("spec.metadata.template", map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"team": "a"}},
				"spec":     map[string]any{"nodeSelector": map[string]any{"pool": "system"}},
			})),
		},
		"ExternalPostgres": {
			reason: "An external PostgreSQL needs a host, a database and credentials.",
			kind:   kind, obj: i(setf("spec.metadata.postgres", map[string]any{"host": "pg example", "database": "meta"})),
			errors: []string{
				`spec.metadata.postgres.credentialsSecretRef: Required value`,
				`spec.metadata.postgres.host: Invalid value: "pg example": spec.metadata.postgres.host in body should match '^[A-Za-z0-9.\-:\[\]]+$'`,
			},
		},
		"MissingGateway": {
			reason: "gateway is required, though it may be {}.",
			kind:   kind, obj: i(delf("spec.gateway")),
			errors: []string{`spec.gateway: Required value`},
		},
	})
}

// TestDefaults pins what the API server stores for the examples: the CRD
// defaults of the original, and no default for metricScrapeMode, so that
// the function's input decides it.
func TestDefaults(t *testing.T) {
	cases := map[string]struct {
		reason string
		kind   string
		obj    map[string]any
		want   map[string]any
	}{
		"Instance": {
			reason: "metadataNG, engineRegistration, metricsPort and the PostgreSQL port and schema default as in the original.",
			kind:   "FireboltInstance",
			obj: obj(`
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltInstance
metadata: {name: demo, namespace: firebolt}
spec:
  metadata:
    postgres: {host: pg.example.com, database: meta, credentialsSecretRef: {name: pg}}
  gateway: {}
  auth: {}
  tls: {gateway: {}}
`),
			want: obj(`
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltInstance
metadata: {name: demo, namespace: firebolt}
spec:
  metadataNG: false
  metadata:
    engineRegistration: false
    postgres: {host: pg.example.com, port: 5432, database: meta, schema: public, credentialsSecretRef: {name: pg}}
  gateway: {metricsPort: 9090}
  auth: {enabled: false}
  tls: {gateway: {enabled: false}}
`),
		},
		"Engine": {
			reason: "storage defaults to {}, PVC size and access modes and auto-stop fields as in the original.",
			kind:   "FireboltEngine",
			obj: obj(`
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: demo, namespace: firebolt}
spec:
  instanceRef: demo
  replicas: 1
  autoStop: {activeReplicas: 1}
`),
			want: obj(`
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: demo, namespace: firebolt}
spec:
  instanceRef: demo
  replicas: 1
  storage: {}
  autoStop: {enabled: false, activeReplicas: 1, idleReplicas: 0, idleTimeout: 30m, pollInterval: 1m}
`),
		},
		"EnginePVC": {
			reason: "A persistentVolumeClaim backend gets the original's size and access modes.",
			kind:   "FireboltEngine",
			obj: obj(`
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: demo, namespace: firebolt}
spec: {instanceRef: demo, replicas: 1, storage: {persistentVolumeClaim: {}}}
`),
			want: obj(`
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: demo, namespace: firebolt}
spec: {instanceRef: demo, replicas: 1, storage: {persistentVolumeClaim: {size: 1Gi, accessModes: [ReadWriteOnce]}}}
`),
		},
		"TemplateMetadataSurvivesPruning": {
			reason: "Template labels and annotations are kept, as are unknown metadata keys (no silent pruning).",
			kind:   "FireboltEngineClass",
			obj: obj(`
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngineClass
metadata: {name: standard, namespace: firebolt}
spec:
  template:
    metadata:
      labels: {team: analytics}
      annotations: {prometheus.io/scrape: "true"}
      extra: kept
    spec:
      volumes:
      - name: scratch
        ephemeral:
          volumeClaimTemplate:
            metadata: {labels: {kind: scratch}}
            spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`),
			want: obj(`
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngineClass
metadata: {name: standard, namespace: firebolt}
spec:
  storage: {}
  template:
    metadata:
      labels: {team: analytics}
      annotations: {prometheus.io/scrape: "true"}
      extra: kept
    spec:
      volumes:
      - name: scratch
        ephemeral:
          volumeClaimTemplate:
            metadata: {labels: {kind: scratch}}
            spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := serversFor(t, tc.kind).claim.admit(tc.obj, nil)
			if diff := cmp.Diff(Result{Object: tc.want}, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
