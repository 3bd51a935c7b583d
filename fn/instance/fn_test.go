package instance_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
)

const (
	provisioningTTL = 10 * time.Second
	stableTTL       = 30 * time.Minute // the input's default
)

// function returns the function with only the instance composer, whose
// passwords come from pw.
func function(pw instance.PasswordGenerator) *fn.Function {
	log := logging.NewNopLogger()
	return fn.NewWithComposers(log, map[string]fn.Composer{
		v1alpha1.XFireboltInstanceKind: instance.New(instance.WithPasswordGenerator(pw), instance.WithClock(func() time.Time { return authNow })),
	})
}

// fixedPassword always mints password.
var fixedPassword = instance.PasswordGeneratorFn(func() (string, error) { return password, nil })

// noPassword fails the test if a password is minted: once the Secret
// exists, or with an external PostgreSQL, none may be.
func noPassword(t *testing.T) instance.PasswordGenerator {
	return instance.PasswordGeneratorFn(func() (string, error) {
		t.Errorf("a password was generated although none is needed")
		return "unexpected", nil
	})
}

// observedSecret is the credentials Secret as the API server returns it.
func observedSecret(t *testing.T) obj {
	return wantPostgresSecret(t, password).with(t,
		"metadata.annotations", map[string]any{"crossplane.io/composition-resource-name": "postgres-credentials"},
		"metadata.uid", "9c1e0d8a-1111-4222-8333-944455556666",
		"metadata.resourceVersion", "812",
		"metadata.creationTimestamp", "2026-08-01T10:00:02Z",
	)
}

// observedRunning is every object of the default instance, its workloads
// rolled out.
func observedRunning(t *testing.T) map[string]obj {
	o := merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID), wantGateway(t))
	o["postgres-credentials"] = observedSecret(t)
	o["postgres"] = o["postgres"].with(t, "metadata.generation", 1,
		"status", map[string]any{"observedGeneration": 1, "replicas": 1, "readyReplicas": 1})
	o["metadata"] = o["metadata"].with(t, "metadata.generation", 1,
		"status", map[string]any{"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1})
	o["gateway"] = o["gateway"].with(t, "metadata.generation", 1,
		"status", map[string]any{"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2})
	o["engine-state"] = parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: demo-engines, namespace: firebolt}}`)
	return o
}

const defaultSpec = `{metadata: {}, gateway: {}}`

// noDatabase is Crossplane's answer, while the credentials Secret is not
// composed, that neither the Secret nor PostgreSQL's volume claim exists.
func noDatabase() map[string][]obj {
	return map[string][]obj{"postgres-credentials": nil, "postgres-volume": nil}
}

// databaseRequirements are what the composer asks for while the internal
// credentials Secret is not composed.
func databaseRequirements() map[string]*fnv1.ResourceSelector {
	ns := namespace
	return map[string]*fnv1.ResourceSelector{
		"postgres-credentials": {ApiVersion: "v1", Kind: "Secret", Namespace: &ns, Match: &fnv1.ResourceSelector_MatchName{MatchName: "demo-metadata-postgres-creds"}},
		"postgres-volume":      {ApiVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: &ns, Match: &fnv1.ResourceSelector_MatchName{MatchName: "data-demo-metadata-pg-0"}},
	}
}

func conditionsProvisioning() []*fnv1.Condition {
	return []*fnv1.Condition{
		cond("MetadataReady", false, "Provisioning", `waiting for PostgreSQL StatefulSet "demo-metadata-pg" to become ready and Deployment "demo-metadata" to become available`),
		cond("GatewayReady", false, "Provisioning", `waiting for Deployment "demo-gateway" to become available`),
	}
}

func conditionsReady() []*fnv1.Condition {
	return []*fnv1.Condition{
		cond("MetadataReady", true, "Ready", "metadata service is available at "+metadataEndpoint),
		cond("GatewayReady", true, "Ready", "gateway is available at "+gatewayEndpoint),
	}
}

func TestRunFunctionInternalPostgres(t *testing.T) {
	all := func(t *testing.T) map[string]obj {
		return merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID), wantGateway(t))
	}
	cases := map[string]struct {
		reason string
		pw     func(t *testing.T) instance.PasswordGenerator
		req    func(t *testing.T) request
		want   func(t *testing.T) want
	}{
		"FirstReconcile": {
			reason: "Nothing exists yet: every object but the PostgreSQL StatefulSet is rendered and none is ready, the password is minted, the id derived, the phase is Provisioning and no event is emitted. The StatefulSet follows once its Secret exists.",
			pw:     func(*testing.T) instance.PasswordGenerator { return fixedPassword },
			req:    func(t *testing.T) request { return request{xr: xr(t, defaultSpec, ""), required: noDatabase()} },
			want: func(t *testing.T) want {
				res := all(t)
				delete(res, "postgres")
				return want{
					status:       status("Provisioning", derivedID, false, false),
					resources:    res,
					conditions:   conditionsProvisioning(),
					requirements: databaseRequirements(),
					ttl:          provisioningTTL,
				}
			},
		},
		"PostgresReadyMetadataStarting": {
			reason: "With PostgreSQL ready and the metadata pod not yet, MetadataReady waits only for the Deployment; the Secret is reproduced and the existing objects are ready.",
			pw:     noPassword,
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["metadata"] = o["metadata"].with(t, "status.availableReplicas", 0, "status.readyReplicas", 0)
				o["gateway"] = o["gateway"].with(t, "status.availableReplicas", 0, "status.readyReplicas", 0)
				return request{xr: xr(t, defaultSpec, `{phase: Provisioning, id: `+derivedID+`}`), observed: o}
			},
			want: func(t *testing.T) want {
				return want{
					status:    status("Provisioning", derivedID, false, false),
					resources: all(t),
					readyRes: allReady("postgres-credentials", "postgres", "postgres-headless", "metadata-config", "metadata-service",
						"gateway-config", "gateway-service", "gateway-pdb", "gateway-serviceaccount", "gateway-role", "gateway-rolebinding"),
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "Provisioning", `waiting for Deployment "demo-metadata" to become available`),
						cond("GatewayReady", false, "Provisioning", `waiting for Deployment "demo-gateway" to become available`),
					},
					ttl: provisioningTTL,
				}
			},
		},
		"BecomesReady": {
			reason: "Every workload is up: endpoints are published, phase Ready with one Normal event, everything ready, the stable TTL.",
			pw:     noPassword,
			req: func(t *testing.T) request {
				return request{xr: xr(t, defaultSpec, `{phase: Provisioning}`), observed: observedRunning(t)}
			},
			want: func(t *testing.T) want {
				res := all(t)
				return want{
					status:     status("Ready", derivedID, true, true),
					ready:      true,
					resources:  res,
					readyRes:   allReady(keys(res)...),
					conditions: conditionsReady(),
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_NORMAL, "Ready",
						"FireboltInstance is Ready: metadata service at "+metadataEndpoint+", gateway at "+gatewayEndpoint)},
					ttl: stableTTL,
				}
			},
		},
		"StaysReady": {
			reason: "A Ready instance that stays Ready emits no event.",
			pw:     noPassword,
			req: func(t *testing.T) request {
				return request{
					xr: xr(t, defaultSpec, `
phase: Ready
id: `+derivedID+`
conditions:
- {type: MetadataReady, status: "True", reason: Ready}
- {type: GatewayReady, status: "True", reason: Ready}
`),
					observed: observedRunning(t),
				}
			},
			want: func(t *testing.T) want {
				res := all(t)
				return want{
					status:     status("Ready", derivedID, true, true),
					ready:      true,
					resources:  res,
					readyRes:   allReady(keys(res)...),
					conditions: conditionsReady(),
					ttl:        stableTTL,
				}
			},
		},
		"GatewayLostItsPods": {
			reason: "A Ready instance whose gateway has no available pod turns Degraded with a warning, clears the gateway endpoint and keeps the metadata one.",
			pw:     noPassword,
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["gateway"] = o["gateway"].with(t, "status.availableReplicas", 0, "status.readyReplicas", 0)
				return request{xr: xr(t, defaultSpec, `{phase: Ready, id: `+derivedID+`}`), observed: o}
			},
			want: func(t *testing.T) want {
				res := all(t)
				ready := allReady(keys(res)...)
				ready["gateway"] = false
				return want{
					status:    status("Degraded", derivedID, true, false),
					resources: res,
					readyRes:  ready,
					conditions: []*fnv1.Condition{
						cond("MetadataReady", true, "Ready", "metadata service is available at "+metadataEndpoint),
						cond("GatewayReady", false, "Provisioning", `waiting for Deployment "demo-gateway" to become available`),
					},
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_WARNING, "Degraded",
						`FireboltInstance is Degraded: GatewayReady: waiting for Deployment "demo-gateway" to become available`)},
					ttl: provisioningTTL,
				}
			},
		},
		"SpecIDBeforeAnyIsPublished": {
			reason: "Before an id is in use, spec.id is the account the metadata service is configured with, and the one published.",
			pw:     func(*testing.T) instance.PasswordGenerator { return fixedPassword },
			req: func(t *testing.T) request {
				return request{xr: xr(t, `{id: 01KP98J0000000000000000000, metadata: {}, gateway: {}}`, ""), required: noDatabase()}
			},
			want: func(t *testing.T) want {
				res := merge(wantPostgres(t, password), wantInternalMetadata(t, "01KP98J0000000000000000000"), wantGateway(t))
				delete(res, "postgres")
				return want{
					status:       status("Provisioning", "01KP98J0000000000000000000", false, false),
					resources:    res,
					conditions:   conditionsProvisioning(),
					requirements: databaseRequirements(),
					ttl:          provisioningTTL,
				}
			},
		},
		"SpecIDNeverSwitchesTheAccountInUse": {
			reason: "A spec.id set after another id was published is not applied: the metadata service keeps the published account, MetadataReady names both ids and the way out, one warning, and the instance is Degraded until the spec says the account in use.",
			pw:     noPassword,
			req: func(t *testing.T) request {
				return request{
					xr: xr(t, `{id: 01KP98J0000000000000000000, metadata: {}, gateway: {}}`, `
phase: Ready
id: `+derivedID+`
conditions:
- {type: MetadataReady, status: "True", reason: Ready}
- {type: GatewayReady, status: "True", reason: Ready}
`),
					observed: observedRunning(t),
				}
			},
			want: func(t *testing.T) want {
				res := merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID), wantGateway(t))
				msg := `spec.id "01KP98J0000000000000000000" is not applied: account "` + derivedID + `" (status.id) is in use, and switching accounts would hide every engine's data from the metadata service. ` +
					`To keep the account, set spec.id to "` + derivedID + `" (this pins it) or remove spec.id; to use account "01KP98J0000000000000000000", create a new FireboltInstance with that spec.id`
				return want{
					status:    status("Degraded", derivedID, true, true),
					resources: res,
					readyRes:  allReady(keys(res)...),
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "IDChangeRefused", msg),
						cond("GatewayReady", true, "Ready", "gateway is available at "+gatewayEndpoint),
					},
					results: []*fnv1.Result{
						result(fnv1.Severity_SEVERITY_WARNING, "IDChangeRefused", msg),
						result(fnv1.Severity_SEVERITY_WARNING, "Degraded", "FireboltInstance is Degraded: MetadataReady: "+msg),
					},
					ttl: provisioningTTL,
				}
			},
		},
		"SpecIDPinsTheAccountInUse": {
			reason: "spec.id set to the published id (pinned in Git) is accepted: nothing changes and the instance is Ready.",
			pw:     noPassword,
			req: func(t *testing.T) request {
				return request{
					xr: xr(t, `{id: `+derivedID+`, metadata: {}, gateway: {}}`, `
phase: Ready
id: `+derivedID+`
conditions:
- {type: MetadataReady, status: "True", reason: Ready}
- {type: GatewayReady, status: "True", reason: Ready}
`),
					observed: observedRunning(t),
				}
			},
			want: func(t *testing.T) want {
				res := merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID), wantGateway(t))
				return want{
					status:     status("Ready", derivedID, true, true),
					ready:      true,
					resources:  res,
					readyRes:   allReady(keys(res)...),
					conditions: conditionsReady(),
					ttl:        stableTTL,
				}
			},
		},
		"EngineRegistrationIsReported": {
			reason: "engineRegistration: true is accepted and changes nothing it renders; a condition says it has no effect yet, without a warning or a change of phase.",
			pw:     noPassword,
			req: func(t *testing.T) request {
				return request{
					xr: xr(t, `{metadata: {engineRegistration: true}, gateway: {}}`, `
phase: Ready
id: `+derivedID+`
conditions:
- {type: MetadataReady, status: "True", reason: Ready}
- {type: GatewayReady, status: "True", reason: Ready}
`),
					observed: observedRunning(t),
				}
			},
			want: func(t *testing.T) want {
				res := merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID), wantGateway(t))
				return want{
					status:    status("Ready", derivedID, true, true),
					ready:     true,
					resources: res,
					readyRes:  allReady(keys(res)...),
					conditions: append(conditionsReady(), cond("EngineRegistration", false, "NotImplemented",
						"spec.metadata.engineRegistration is true but has no effect yet: engines are not registered in the metadata service (neither does the original operator, which declares the field and never acts on it)")),
					ttl: stableTTL,
				}
			},
		},
		"EngineRegistrationTurnedOff": {
			reason: "Crossplane keeps a condition a function stops sending, so once reported it turns to Disabled when the field goes back to false.",
			pw:     noPassword,
			req: func(t *testing.T) request {
				return request{
					xr: xr(t, defaultSpec, `
phase: Ready
id: `+derivedID+`
conditions:
- {type: MetadataReady, status: "True", reason: Ready}
- {type: GatewayReady, status: "True", reason: Ready}
- {type: EngineRegistration, status: "False", reason: NotImplemented}
`),
					observed: observedRunning(t),
				}
			},
			want: func(t *testing.T) want {
				res := merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID), wantGateway(t))
				return want{
					status:     status("Ready", derivedID, true, true),
					ready:      true,
					resources:  res,
					readyRes:   allReady(keys(res)...),
					conditions: append(conditionsReady(), cond("EngineRegistration", false, "Disabled", "spec.metadata.engineRegistration is false")),
					ttl:        stableTTL,
				}
			},
		},
		"TamperedSecret": {
			reason: "A credentials Secret that lost its password is neither repaired nor replaced: PostgreSQL and the metadata service are returned as observed and MetadataReady says why, naming the key only.",
			pw:     noPassword,
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["postgres-credentials"] = o["postgres-credentials"].with(t, "data.password", nil)
				return request{xr: xr(t, defaultSpec, `{phase: Ready, id: `+derivedID+`}`), observed: o}
			},
			want: func(t *testing.T) want {
				o := observedRunning(t)
				res := merge(wantGateway(t), map[string]obj{
					"postgres-credentials": frozenObj(t, o["postgres-credentials"].with(t, "data.password", nil)),
					"postgres":             frozenObj(t, o["postgres"]),
					"postgres-headless":    frozenObj(t, o["postgres-headless"]),
					"metadata-config":      frozenObj(t, o["metadata-config"]),
					"metadata":             frozenObj(t, o["metadata"]),
					"metadata-service":     frozenObj(t, o["metadata-service"]),
				})
				msg := `PostgreSQL credentials Secret "demo-metadata-postgres-creds" was changed and is not regenerated, because PostgreSQL keeps the password it was initialised with: key password is missing or empty`
				return want{
					status:    status("Degraded", derivedID, true, true),
					resources: res,
					readyRes:  allReady(keys(res)...),
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "PostgresEnsureFailed", msg),
						cond("GatewayReady", true, "Ready", "gateway is available at "+gatewayEndpoint),
					},
					results: []*fnv1.Result{
						result(fnv1.Severity_SEVERITY_WARNING, "PostgresEnsureFailed", msg),
						result(fnv1.Severity_SEVERITY_WARNING, "Degraded", "FireboltInstance is Degraded: MetadataReady: "+msg),
					},
					ttl: provisioningTTL,
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := function(tc.pw(t)).RunFunction(context.Background(), tc.req(t).build(t))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want(t).build(t), withoutEngineState(t, rsp), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// frozenObj is what the composer returns for an existing object it must
// not change: the object without status and server-set metadata.
func frozenObj(t *testing.T, o obj) obj {
	return o.with(t, "status", nil, "metadata.uid", nil, "metadata.resourceVersion", nil,
		"metadata.generation", nil, "metadata.creationTimestamp", nil)
}
