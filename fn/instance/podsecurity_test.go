package instance_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// TestRunFunctionPodSecurity runs instance templates that ask for what the
// function input's pod-security allow-list governs. Refused, the component
// is not rendered at all and its condition names the field and the
// allow-list; allowed by the input, it is rendered.
func TestRunFunctionPodSecurity(t *testing.T) {
	cases := map[string]struct {
		reason      string
		spec        string
		podSecurity string
		// condition is the component's condition type; refused its
		// message when refused.
		condition, refused string
		// component is a desired resource that exists exactly when allowed.
		component string
	}{
		"GatewaySidecarHostPathRefused": {
			reason: "A gateway sidecar may not mount a node directory by default.",
			spec: `{metadata: {}, gateway: {template: {spec: {
  volumes: [{name: logs, hostPath: {path: /var/log/envoy}}],
  containers: [{name: shipper, image: "fluent/fluent-bit:3.1", volumeMounts: [{name: logs, mountPath: /logs}]}]}}}}`,
			condition: "GatewayReady",
			refused:   `spec.gateway.template is rejected: spec.gateway.template.spec.volumes[logs].hostPath.path: Forbidden: host path "/var/log/envoy" is not below any of the function input's spec.podSecurity.allowedHostPaths (none listed)`,
			component: "gateway",
		},
		"GatewaySidecarHostPathAllowed": {
			reason: "The platform operator may allow it in the function input.",
			spec: `{metadata: {}, gateway: {template: {spec: {
  volumes: [{name: logs, hostPath: {path: /var/log/envoy}}],
  containers: [{name: shipper, image: "fluent/fluent-bit:3.1", volumeMounts: [{name: logs, mountPath: /logs}]}]}}}}`,
			podSecurity: `{allowedHostPaths: [/var/log]}`,
			condition:   "GatewayReady",
			component:   "gateway",
		},
		"MetadataServiceAccountNarrowed": {
			reason:      "The metadata pod's ServiceAccount is subject to a narrowed list.",
			spec:        `{metadata: {template: {spec: {serviceAccountName: metadata}}}, gateway: {}}`,
			podSecurity: `{allowedServiceAccountNames: [firebolt-metadata]}`,
			condition:   "MetadataReady",
			refused:     `spec.metadata.template is rejected: spec.metadata.template.spec.serviceAccountName: Forbidden: ServiceAccount "metadata" is not in the function input's spec.podSecurity.allowedServiceAccountNames (listed: firebolt-metadata)`,
			component:   "metadata",
		},
		"MetadataServiceAccountByDefault": {
			reason:    "Any ServiceAccount by default, as the original's instance-full example sets.",
			spec:      `{metadata: {template: {spec: {serviceAccountName: metadata}}}, gateway: {}}`,
			condition: "MetadataReady",
			component: "metadata",
		},
		"MetadataSidecarRootRefused": {
			reason:    "A sidecar running as root needs allowRunAsRoot.",
			spec:      `{metadata: {template: {spec: {containers: [{name: proxy, image: "busybox:1.36", securityContext: {runAsUser: 0}}]}}}, gateway: {}}`,
			condition: "MetadataReady",
			refused:   `spec.metadata.template is rejected: spec.metadata.template.spec.containers[proxy].securityContext.runAsUser: Forbidden: running as root (UID 0) needs the function input's spec.podSecurity.allowRunAsRoot: true`,
			component: "metadata",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := request{xr: xr(t, tc.spec, ""), observed: map[string]obj{"postgres-credentials": observedSecret(t)}}.build(t)
			if tc.podSecurity != "" {
				in := parse(t, "apiVersion: firebolt.fn.crossplane.io/v1beta1\nkind: Input\nspec: {podSecurity: "+tc.podSecurity+"}")
				s, err := structpb.NewStruct(in)
				if err != nil {
					t.Fatal(err)
				}
				req.Input = s
			}
			rsp, err := function(noPassword(t)).RunFunction(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var c *fnv1.Condition
			for _, x := range rsp.GetConditions() {
				if x.GetType() == tc.condition {
					c = x
				}
			}
			_, rendered := rsp.GetDesired().GetResources()[tc.component]
			if tc.refused != "" {
				if c.GetReason() != "TemplateRejected" || c.GetMessage() != tc.refused {
					t.Errorf("%s\n%s: want TemplateRejected %q, got %s %q", tc.reason, tc.condition, tc.refused, c.GetReason(), c.GetMessage())
				}
				if rendered {
					t.Errorf("%s\n%s rendered although its template is refused", tc.reason, tc.component)
				}
				return
			}
			if c.GetReason() == "TemplateRejected" || !rendered {
				t.Errorf("%s\nwant %s rendered; %s: %s %q", tc.reason, tc.component, tc.condition, c.GetReason(), c.GetMessage())
			}
		})
	}
}
