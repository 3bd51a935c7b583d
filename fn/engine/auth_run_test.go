package engine_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
)

// requiredInstance is the instance a request hands in.
func requiredInstance(req *fnv1.RunFunctionRequest) *structpb.Struct {
	return req.GetRequiredResources()[engine.RequirementInstance].GetItems()[0].GetResource()
}

// withAdminSecretVersion makes the admin password's Secret a request
// hands in carry resourceVersion v: it was written since.
func withAdminSecretVersion(v string) func(*fnv1.RunFunctionRequest) {
	return func(req *fnv1.RunFunctionRequest) {
		s := req.GetRequiredResources()[engine.RequirementAdminSecret].GetItems()[0].GetResource()
		s.GetFields()["metadata"].GetStructValue().Fields["resourceVersion"] = structpb.NewStringValue(v)
	}
}

// withSecondSigningKey makes the instance's status list a second key,
// freshly minted for validation, as the rotation's first step leaves it.
func withSecondSigningKey(req *fnv1.RunFunctionRequest) {
	st := requiredInstance(req).GetFields()["status"].GetStructValue().GetFields()["auth"].GetStructValue()
	st.Fields["signingKeyGeneration"] = structpb.NewNumberValue(2)
	keys := st.GetFields()["signingKeys"].GetListValue()
	keys.Values = append(keys.Values, structpb.NewStructValue(resourceJSON(`{"id": "signing-2", "secretName": "inst-auth-signing-signing-2",
		"phase": "ValidationOnly", "algorithm": "ECDSA", "size": 384, "createdAt": "2026-11-22T13:00:00Z",
		"observedPublicKeyFingerprint": "`+strings.Repeat("cd", 32)+`"}`)))
}

// withAuthReady sets the instance's AuthReady condition.
func withAuthReady(status, reason, message string) func(*fnv1.RunFunctionRequest) {
	return func(req *fnv1.RunFunctionRequest) {
		st := requiredInstance(req).GetFields()["status"].GetStructValue()
		st.Fields["conditions"] = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStructValue(resourceJSON(
			`{"type": "AuthReady", "status": "` + status + `", "reason": "` + reason + `", "message": "` + message + `", "lastTransitionTime": "2026-11-22T13:00:00Z"}`))}})
	}
}

// withRotationInterval changes only the rotation's timing.
func withRotationInterval(d string) func(*fnv1.RunFunctionRequest) {
	return func(req *fnv1.RunFunctionRequest) {
		sk := requiredInstance(req).GetFields()["spec"].GetStructValue().GetFields()["auth"].GetStructValue().
			GetFields()["local"].GetStructValue().GetFields()["signingKeys"].GetStructValue()
		sk.Fields["rotationInterval"] = structpb.NewStringValue(d)
		sk.Fields["retainDuration"] = structpb.NewStringValue(d)
	}
}

// TestAuthReadyIsTheInstanceComposers: the engine waits on the condition
// the instance composer reports.
func TestAuthReadyIsTheInstanceComposers(t *testing.T) {
	if engine.TypeInstanceAuthReady != instance.TypeAuthReady {
		t.Errorf("the engine reads condition %q, the instance reports %q", engine.TypeInstanceAuthReady, instance.TypeAuthReady)
	}
}

// TestAdminPasswordNeverLeaves: the admin password's Secret is handed in
// with its value, as Crossplane hands it in; no part of any response
// carries it, in clear or in base64, not even inside the gzipped
// recordings of status.renderings.
func TestAdminPasswordNeverLeaves(t *testing.T) {
	secret := func(req *fnv1.RunFunctionRequest) string {
		return protojson.Format(req.GetRequiredResources()[engine.RequirementAdminSecret])
	}
	encoded := base64.StdEncoding.EncodeToString([]byte(simAdminPassword))
	cases := map[string]struct {
		request string
		mutate  func(*fnv1.RunFunctionRequest)
	}{
		"Creating":          {request: "creating-auth"},
		"Stable":            {request: "stable-auth"},
		"PasswordChanged":   {request: "stable-auth", mutate: withAdminSecretVersion("8")},
		"KeyMinted":         {request: "stable-auth", mutate: withSecondSigningKey},
		"AuthNotReady":      {request: "stable-auth", mutate: withAuthReady("False", "AdminSecretMissing", "no key")},
		"InstanceNotReady":  {request: "stable-auth", mutate: func(req *fnv1.RunFunctionRequest) { delete(requiredInstance(req).GetFields(), "status") }},
		"RotationRetimed":   {request: "stable-auth", mutate: withRotationInterval("1h0m0s")},
		"SecretUnderAnyKey": {request: "stable-auth", mutate: everyKeyHoldsThePassword},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := loadRequest(t, tc.request)
			if tc.mutate != nil {
				tc.mutate(req)
			}
			if !strings.Contains(secret(req), encoded) {
				t.Fatalf("the request carries no admin password to leak; the test proves nothing:\n%s", secret(req))
			}
			rsp := runEngine(t, req)
			everything := protojson.Format(rsp)
			st := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue()
			for _, r := range st.GetFields()["renderings"].GetListValue().GetValues() {
				everything += "\n" + inflate(t, r.GetStructValue().GetFields()["objects"].GetStringValue())
			}
			for _, leak := range []string{simAdminPassword, encoded} {
				if strings.Contains(everything, leak) {
					t.Errorf("the response carries the admin password (%q):\n%s", leak, everything)
				}
			}
		})
	}
}

// everyKeyHoldsThePassword puts the password under every key of the
// Secret and in its annotations, where a careless reader would copy it.
func everyKeyHoldsThePassword(req *fnv1.RunFunctionRequest) {
	s := req.GetRequiredResources()[engine.RequirementAdminSecret].GetItems()[0].GetResource()
	encoded := base64.StdEncoding.EncodeToString([]byte(simAdminPassword))
	data := s.GetFields()["data"].GetStructValue()
	for _, k := range []string{"username", "token", "password-file"} {
		data.Fields[k] = structpb.NewStringValue(encoded)
	}
	s.GetFields()["stringData"] = structpb.NewStructValue(resourceJSON(`{"password": "` + simAdminPassword + `"}`))
	s.GetFields()["metadata"].GetStructValue().Fields["annotations"] = structpb.NewStructValue(resourceJSON(`{"note": "` + simAdminPassword + `"}`))
}

func inflate(t *testing.T, s string) string {
	t.Helper()
	z, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRotationTimingRollsNothing: rotationInterval and retainDuration
// change no engine (the auth hash leaves them out), so a change of them
// alone is answered exactly as before.
func TestRotationTimingRollsNothing(t *testing.T) {
	want := runEngine(t, loadRequest(t, "stable-auth"))
	req := loadRequest(t, "stable-auth")
	withRotationInterval("1h0m0s")(req)
	if diff := cmp.Diff(want, runEngine(t, req), protocmp.Transform()); diff != "" {
		t.Errorf("a change of the rotation's timing changed the response: -before, +after:\n%s", diff)
	}
}

// TestStableAuthPublishesItsHash: at rest, the engine publishes the hash
// of the auth its serving generation runs, in its status and on its
// routing Service, where the instance lists it by its labels.
func TestStableAuthPublishesItsHash(t *testing.T) {
	rsp := runEngine(t, loadRequest(t, "stable-auth"))
	st := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue()
	hash := st.GetFields()["observedAuthHash"].GetStringValue()
	if len(hash) != 16 {
		t.Fatalf("status.observedAuthHash %q, want a 16-digit hash", hash)
	}
	svc := rsp.GetDesired().GetResources()[string(engine.RoutingServiceKey)].GetResource().GetFields()["metadata"].GetStructValue()
	labels := svc.GetFields()["labels"].GetStructValue().AsMap()
	for k, v := range map[string]string{contract.LabelInstanceRef: simInstance, contract.LabelComponent: contract.ComponentEngineRouting, contract.LabelEngine: simEngine} {
		if labels[k] != v {
			t.Errorf("routing Service label %s = %v, want %s", k, labels[k], v)
		}
	}
	if got := svc.GetFields()["annotations"].GetStructValue().GetFields()[contract.AnnotationObservedAuthHash].GetStringValue(); got != hash {
		t.Errorf("routing Service annotation %s = %q, want status.observedAuthHash %q", contract.AnnotationObservedAuthHash, got, hash)
	}
}
