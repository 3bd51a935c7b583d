package composite

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

func TestRequiredSecretFacts(t *testing.T) {
	const value = "c2VjcmV0LXZhbHVl" // base64 of the value that must stay put
	secret := func(t *testing.T, name string, data map[string]any) *fnv1.Resource {
		t.Helper()
		s, err := structpb.NewStruct(map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": name, "namespace": "firebolt", "resourceVersion": "42"},
			"data":     data,
		})
		if err != nil {
			t.Fatal(err)
		}
		return &fnv1.Resource{Resource: s}
	}
	cases := map[string]struct {
		reason string
		req    func(t *testing.T) *fnv1.RunFunctionRequest
		want   SecretFacts
	}{
		"NotFetched": {
			reason: "Crossplane has not tried yet.",
			req:    func(*testing.T) *fnv1.RunFunctionRequest { return &fnv1.RunFunctionRequest{} },
		},
		"Missing": {
			reason: "Crossplane tried and found nothing.",
			req: func(*testing.T) *fnv1.RunFunctionRequest {
				return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{"s": {}}}
			},
			want: SecretFacts{Resolved: true},
		},
		"KeySet": {
			reason: "The key holds a value: only that it does, and the version, are read.",
			req: func(t *testing.T) *fnv1.RunFunctionRequest {
				return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{"s": {Items: []*fnv1.Resource{secret(t, "admin", map[string]any{"password": value})}}}}
			},
			want: SecretFacts{Resolved: true, Found: true, ResourceVersion: "42", KeyNonEmpty: true},
		},
		"KeyEmpty": {
			reason: "An empty value is no password.",
			req: func(t *testing.T) *fnv1.RunFunctionRequest {
				return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{"s": {Items: []*fnv1.Resource{secret(t, "admin", map[string]any{"password": "", "other": value})}}}}
			},
			want: SecretFacts{Resolved: true, Found: true, ResourceVersion: "42"},
		},
		"KeyNotAString": {
			reason: "A value Crossplane would never send is no value.",
			req: func(t *testing.T) *fnv1.RunFunctionRequest {
				return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{"s": {Items: []*fnv1.Resource{secret(t, "admin", map[string]any{"password": map[string]any{"v": value}})}}}}
			},
			want: SecretFacts{Resolved: true, Found: true, ResourceVersion: "42"},
		},
		"OtherName": {
			reason: "A Secret of another name, fetched for an earlier reference, is not this one.",
			req: func(t *testing.T) *fnv1.RunFunctionRequest {
				return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{"s": {Items: []*fnv1.Resource{secret(t, "old-admin", map[string]any{"password": value})}}}}
			},
			want: SecretFacts{Resolved: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := RequiredSecretFacts(tc.req(t), "s", "admin", "password")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRequiredSecretFacts: -want, +got:\n%s", tc.reason, diff)
			}
			if s := fmt.Sprintf("%#v", got); strings.Contains(s, value) {
				t.Errorf("the facts carry the Secret's value: %s", s)
			}
		})
	}
}
