package instance_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
)

// asObserved turns a desired composed resource into what Crossplane
// observes once it exists: the same content plus everything the API server
// and Crossplane add.
func asObserved(t *testing.T, r *fnv1.Resource, rn string) obj {
	t.Helper()
	b, err := protojson.Marshal(r.GetResource())
	if err != nil {
		t.Fatal(err)
	}
	o := obj{}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	return o.with(t,
		"metadata.annotations", map[string]any{"crossplane.io/composition-resource-name": rn},
		"metadata.labels[crossplane.io/composite]", xrName,
		"metadata.uid", "9c1e0d8a-1111-4222-8333-944455556666",
		"metadata.resourceVersion", "812",
		"metadata.creationTimestamp", "2026-08-01T10:00:02Z",
		"metadata.ownerReferences", []any{map[string]any{"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "XFireboltInstance", "name": xrName, "uid": "5b7a2a3e-3c1f-4d5e-9a0b-1c2d3e4f5a6b", "controller": true}},
		"metadata.managedFields", []any{map[string]any{"manager": "apiextensions.crossplane.io/composed/x", "operation": "Apply"}},
	)
}

// TestSecretStability mints the credentials once, then feeds the Secret
// back as observed through reconciles that change the spec and would mint a
// different password each time: the Secret must come back byte for byte.
func TestSecretStability(t *testing.T) {
	minted := 0
	pw := instance.PasswordGeneratorFn(func() (string, error) {
		minted++
		return strings.Repeat(string(rune('a'+minted)), 24), nil
	})
	f := function(pw)

	first, err := f.RunFunction(context.Background(), request{xr: xr(t, defaultSpec, ""), required: noDatabase()}.build(t))
	if err != nil {
		t.Fatal(err)
	}
	secret := first.GetDesired().GetResources()["postgres-credentials"]
	if secret == nil {
		t.Fatalf("the first reconcile composed no credentials Secret: %v", first)
	}
	wantBytes, err := json.Marshal(secret.GetResource().AsMap())
	if err != nil {
		t.Fatal(err)
	}
	observed := map[string]obj{"postgres-credentials": asObserved(t, secret, "postgres-credentials")}

	for i, spec := range []string{
		defaultSpec,
		`{metadata: {}, gateway: {replicas: 5}}`,
		`{metadataNG: true, metadata: {}, gateway: {}}`,
		`{id: 01KP98J0000000000000000000, metadata: {}, gateway: {}}`,
	} {
		rsp, err := f.RunFunction(context.Background(), request{xr: xr(t, spec, ""), observed: observed}.build(t))
		if err != nil {
			t.Fatal(err)
		}
		got := rsp.GetDesired().GetResources()["postgres-credentials"]
		if diff := cmp.Diff(secret.GetResource(), got.GetResource(), protocmp.Transform()); diff != "" {
			t.Errorf("reconcile %d (%s): the Secret changed: -first, +now:\n%s", i+2, spec, diff)
		}
		gotBytes, err := json.Marshal(got.GetResource().AsMap())
		if err != nil {
			t.Fatal(err)
		}
		if string(gotBytes) != string(wantBytes) {
			t.Errorf("reconcile %d (%s): the Secret is not byte for byte the first one:\nfirst: %s\nnow:   %s", i+2, spec, wantBytes, gotBytes)
		}
		if got.GetReady() != fnv1.Ready_READY_TRUE {
			t.Errorf("reconcile %d: an existing Secret should be ready, got %v", i+2, got.GetReady())
		}
	}
	if minted != 1 {
		t.Errorf("minted %d passwords, want 1: only the reconcile without a Secret may mint one", minted)
	}
}

// canary is a password no rendering could produce by accident.
const canary = "C4n4ry-P4ssw0rd-9f3e1b"

// TestPasswordNeverLeaves scans every field of the response but the
// credentials Secret itself, and everything logged at debug level, for the
// password in clear or base64, over reconciles that exercise every path
// that talks about credentials.
func TestPasswordNeverLeaves(t *testing.T) {
	secretWithCanary := func(t *testing.T) obj {
		return observedSecret(t).with(t, "data.password", b64(canary))
	}
	cases := map[string]struct {
		req func(t *testing.T) request
		// secretResource is the resource allowed to hold the password.
		secretResource string
	}{
		"InternalFirstReconcile": {
			req:            func(t *testing.T) request { return request{xr: xr(t, defaultSpec, ""), required: noDatabase()} },
			secretResource: "postgres-credentials",
		},
		"InternalRunning": {
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["postgres-credentials"] = secretWithCanary(t)
				return request{xr: xr(t, defaultSpec, `{phase: Provisioning}`), observed: o}
			},
			secretResource: "postgres-credentials",
		},
		"InternalSecretTampered": {
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["postgres-credentials"] = secretWithCanary(t).with(t, "data.username", b64("root"))
				return request{xr: xr(t, defaultSpec, `{phase: Ready}`), observed: o}
			},
			secretResource: "postgres-credentials",
		},
		"InternalSecretRestored": {
			req: func(t *testing.T) request {
				o := observedRunning(t)
				delete(o, "postgres-credentials")
				return request{xr: xr(t, defaultSpec, `{phase: Ready}`), observed: o,
					required: map[string][]obj{"postgres-credentials": {restoredSecret(t).with(t, "data.password", b64(canary))}, "postgres-volume": nil}}
			},
			secretResource: "postgres-credentials",
		},
		"InternalSecretLost": {
			req: func(t *testing.T) request {
				o := observedRunning(t)
				delete(o, "postgres-credentials")
				return request{xr: xr(t, defaultSpec, `{phase: Ready}`), observed: o, required: noDatabase()}
			},
		},
		"SidecarAsksForThePassword": {
			req: func(t *testing.T) request {
				return request{xr: xr(t, `
metadata:
  template:
    spec:
      containers:
      - name: debug
        image: busybox:1.36
        env: [{name: PGPASSWORD, valueFrom: {secretKeyRef: {name: demo-metadata-postgres-creds, key: password}}}]
gateway: {}
`, ""), observed: map[string]obj{"postgres-credentials": secretWithCanary(t)}}
			},
			secretResource: "postgres-credentials",
		},
		"ExternalSecret": {
			req: func(t *testing.T) request {
				return request{xr: xr(t, externalSpec, ""), required: map[string][]obj{"postgres-credentials": {
					externalSecret(t, map[string]any{"username": b64("fb"), "password": b64(canary)}),
				}}}
			},
		},
		"ExternalSecretMissingUsername": {
			req: func(t *testing.T) request {
				return request{xr: xr(t, externalSpec, ""), required: map[string][]obj{"postgres-credentials": {
					externalSecret(t, map[string]any{"password": b64(canary)}),
				}}}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var logs strings.Builder
			log := logging.NewLogrLogger(funcr.New(func(prefix, args string) {
				logs.WriteString(prefix + " " + args + "\n")
			}, funcr.Options{Verbosity: 10}))
			pw := instance.PasswordGeneratorFn(func() (string, error) { return canary, nil })
			f := fn.NewWithComposers(log, map[string]fn.Composer{v1alpha1.XFireboltInstanceKind: instance.New(instance.WithPasswordGenerator(pw))})

			rsp, err := f.RunFunction(context.Background(), tc.req(t).build(t))
			if err != nil {
				t.Fatal(err)
			}
			scan := proto.Clone(rsp).(*fnv1.RunFunctionResponse)
			if tc.secretResource != "" {
				s := scan.GetDesired().GetResources()[tc.secretResource]
				if !strings.Contains(protojson.Format(s), b64(canary)) {
					t.Fatalf("the Secret does not hold the password, so this scan proves nothing: %v", s)
				}
				delete(scan.GetDesired().GetResources(), tc.secretResource)
			}
			out := protojson.Format(scan) + logs.String()
			if logs.Len() == 0 {
				t.Fatalf("nothing was logged, so the log scan proves nothing")
			}
			for _, leak := range []string{canary, b64(canary)} {
				if strings.Contains(out, leak) {
					t.Errorf("the password (%q) appears outside the credentials Secret:\n%s", leak, out)
				}
			}
		})
	}
}
