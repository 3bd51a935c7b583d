package instance_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// readyStatus is a Ready instance's status as the composite carries it.
const readyStatus = `
phase: Ready
id: ` + derivedID + `
conditions:
- {type: MetadataReady, status: "True", reason: Ready}
- {type: GatewayReady, status: "True", reason: Ready}
`

// leftoverVolume is PostgreSQL's volume claim as the API server returns it.
func leftoverVolume(t *testing.T) obj {
	return parse(t, `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-demo-metadata-pg-0, namespace: firebolt, labels: {firebolt.io/instance: demo, firebolt.io/component: postgres}}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
status: {phase: Bound}
`)
}

// restoredSecret is the credentials Secret a user re-applied from a backup:
// no composition annotation, no owner.
func restoredSecret(t *testing.T) obj {
	return wantPostgresSecret(t, password).with(t, "metadata.resourceVersion", "9001", "metadata.uid", "7f3c0b6e-2222-4333-8444-955566667777")
}

// TestRunFunctionLostCredentials: PostgreSQL keeps the password its data
// directory was initialised with, so once its Secret is gone no new one is
// minted while a database may exist; a restored Secret is taken back.
func TestRunFunctionLostCredentials(t *testing.T) {
	withoutSecret := func(t *testing.T) map[string]obj {
		o := observedRunning(t)
		delete(o, "postgres-credentials")
		return o
	}
	frozenPostgresAndMetadata := func(t *testing.T, o map[string]obj) map[string]obj {
		out := map[string]obj{}
		for _, rn := range []string{"postgres", "postgres-headless", "metadata-config", "metadata", "metadata-service"} {
			if v, ok := o[rn]; ok {
				out[rn] = frozenObj(t, v)
			}
		}
		return out
	}
	restore := `Restore the Secret from a backup in namespace "firebolt" (type Opaque, keys username=firebolt, password, database=firebolt_metadata) and the instance picks it up; to discard the database instead, `
	stsMsg := `PostgreSQL credentials Secret "demo-metadata-postgres-creds" is missing while PostgreSQL StatefulSet "demo-metadata-pg" still holds the database, which keeps the password it was initialised with; a new password would lock the metadata service out, so none is generated. ` +
		restore + `delete StatefulSet "demo-metadata-pg" (its volume claim goes with it)`
	volMsg := `PostgreSQL credentials Secret "demo-metadata-postgres-creds" is missing while PostgreSQL volume claim "data-demo-metadata-pg-0" still holds the database, which keeps the password it was initialised with; a new password would lock the metadata service out, so none is generated. ` +
		restore + `delete PersistentVolumeClaim "data-demo-metadata-pg-0"`

	cases := map[string]struct {
		reason string
		req    func(t *testing.T) request
		want   func(t *testing.T) want
	}{
		"NotLookedForYet": {
			reason: "Before Crossplane has looked for an existing Secret and volume, nothing of PostgreSQL or the metadata service is rendered and no password is minted: the function asks for both by name.",
			req:    func(t *testing.T) request { return request{xr: xr(t, defaultSpec, "")} },
			want: func(t *testing.T) want {
				return want{
					status:       status("Provisioning", derivedID, false, false),
					resources:    wantGateway(t),
					requirements: databaseRequirements(),
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "Provisioning", `waiting for Crossplane to look for an existing PostgreSQL credentials Secret "demo-metadata-postgres-creds" and volume claim "data-demo-metadata-pg-0"`),
						cond("GatewayReady", false, "Provisioning", `waiting for Deployment "demo-gateway" to become available`),
					},
					ttl: provisioningTTL,
				}
			},
		},
		"SecretDeletedWhileStatefulSetExists": {
			reason: "The Secret was deleted under a running instance: no password is minted, PostgreSQL and the metadata service are returned as observed, MetadataReady says how to restore the Secret, one warning each, and the gateway carries on.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, defaultSpec, readyStatus), observed: withoutSecret(t), required: noDatabase()}
			},
			want: func(t *testing.T) want {
				res := merge(wantGateway(t), frozenPostgresAndMetadata(t, withoutSecret(t)))
				return want{
					status:       status("Degraded", derivedID, true, true),
					resources:    res,
					readyRes:     allReady(keys(res)...),
					requirements: databaseRequirements(),
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "PostgresEnsureFailed", stsMsg),
						cond("GatewayReady", true, "Ready", "gateway is available at "+gatewayEndpoint),
					},
					results: []*fnv1.Result{
						result(fnv1.Severity_SEVERITY_WARNING, "PostgresEnsureFailed", stsMsg),
						result(fnv1.Severity_SEVERITY_WARNING, "Degraded", "FireboltInstance is Degraded: MetadataReady: "+stsMsg),
					},
					ttl: provisioningTTL,
				}
			},
		},
		"VolumeOutlivedEverything": {
			reason: "A volume claim from an earlier instance of the same name still exists: no password is minted and no PostgreSQL is started on it.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, defaultSpec, ""), required: map[string][]obj{"postgres-credentials": nil, "postgres-volume": {leftoverVolume(t)}}}
			},
			want: func(t *testing.T) want {
				return want{
					status:       status("Provisioning", derivedID, false, false),
					resources:    wantGateway(t),
					requirements: databaseRequirements(),
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "PostgresEnsureFailed", volMsg),
						cond("GatewayReady", false, "Provisioning", `waiting for Deployment "demo-gateway" to become available`),
					},
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_WARNING, "PostgresEnsureFailed", volMsg)},
					ttl:     provisioningTTL,
				}
			},
		},
		"SecretRestored": {
			reason: "The user restored the Secret: it is taken back as it is (composed again, same password), and everything renders as before.",
			req: func(t *testing.T) request {
				return request{
					xr:       xr(t, defaultSpec, readyStatus),
					observed: withoutSecret(t),
					required: map[string][]obj{"postgres-credentials": {restoredSecret(t)}, "postgres-volume": {leftoverVolume(t)}},
				}
			},
			want: func(t *testing.T) want {
				res := merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID), wantGateway(t))
				ready := allReady(keys(res)...)
				ready["postgres-credentials"] = false
				return want{
					status:       status("Ready", derivedID, true, true),
					ready:        true,
					resources:    res,
					readyRes:     ready,
					requirements: databaseRequirements(),
					conditions:   conditionsReady(),
					ttl:          stableTTL,
				}
			},
		},
		"SecretOfAnotherInstance": {
			reason: "A Secret of that name controlled by another composite (an earlier instance being deleted) is neither adopted nor overwritten.",
			req: func(t *testing.T) request {
				s := restoredSecret(t).with(t, "metadata.ownerReferences", []any{map[string]any{
					"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "XFireboltInstance", "name": "demo-old12", "uid": "0d0d0d0d-0000-4000-8000-000000000000", "controller": true,
				}})
				return request{xr: xr(t, defaultSpec, ""), required: map[string][]obj{"postgres-credentials": {s}, "postgres-volume": nil}}
			},
			want: func(t *testing.T) want {
				msg := `PostgreSQL credentials Secret "demo-metadata-postgres-creds" is controlled by XFireboltInstance demo-old12, not by this instance: if it is left over from a deleted instance, it goes with it; otherwise delete it`
				return want{
					status:       status("Provisioning", derivedID, false, false),
					resources:    wantGateway(t),
					requirements: databaseRequirements(),
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "PostgresEnsureFailed", msg),
						cond("GatewayReady", false, "Provisioning", `waiting for Deployment "demo-gateway" to become available`),
					},
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_WARNING, "PostgresEnsureFailed", msg)},
					ttl:     provisioningTTL,
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := function(noPassword(t)).RunFunction(context.Background(), tc.req(t).build(t))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want(t).build(t), withoutEngineState(t, rsp), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
