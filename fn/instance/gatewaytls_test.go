package instance_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/instance/envoyconfig"
)

// tlsSpec asks for TLS on the gateway from cert-manager, with the fields
// admission defaults spelled out; extra is added to spec.tls.gateway.
func tlsSpec(extra string) string {
	return `{metadata: {}, gateway: {}, tls: {gateway: {enabled: true, certManager: {issuerRef: {name: ca, kind: ClusterIssuer}, algorithm: ECDSA, size: 384}` + extra + `}}}`
}

// tlsGateway is the gateway rendered with posture l: the ConfigMap holds
// envoy.yaml and its SDS files, the Deployment mounts them and the
// listener's Secrets, and rolls with every old pod stopped first when
// staging.
func tlsGateway(t *testing.T, l envoyconfig.Listener, cert, clientCA, crl string, staging bool) map[string]obj {
	t.Helper()
	files, err := envoyconfig.Files(envoyconfig.Params{Namespace: namespace, WakeAgent: true, Listener: l})
	if err != nil {
		t.Fatal(err)
	}
	g := wantGateway(t)
	g["gateway-config"] = g["gateway-config"].with(t, "data", files)
	parts := make([]string, 0, len(files)+3)
	items := make([]any, 0, len(files))
	for _, k := range envoyconfig.FileKeys(files) {
		parts = append(parts, files[k])
		items = append(items, map[string]any{"key": k, "path": k})
	}
	if cert != "" {
		parts = append(parts, cert, clientCA, crl)
	}
	d := g["gateway"].with(t,
		"spec.template.metadata.annotations", map[string]any{"firebolt.io/config-hash": configHash(parts...)},
		"spec.template.spec.volumes[0].configMap.items", items)
	if staging {
		d = d.with(t, "spec.strategy.rollingUpdate", map[string]any{"maxSurge": 0, "maxUnavailable": "100%"})
	}
	if cert != "" {
		vols := []any{parse(t, `{name: tls-gateway, secret: {secretName: `+cert+`, items: [{key: tls.crt, path: tls.crt}, {key: tls.key, path: tls.key}]}}`)}
		mounts := []any{parse(t, `{name: tls-gateway, mountPath: /etc/envoy-tls/gateway, readOnly: true}`)}
		if clientCA != "" {
			sources := `[{secret: {name: ` + clientCA + `, items: [{key: ca.crt, path: ca.crt}]}}`
			if crl != "" {
				sources += `, {secret: {name: ` + crl + `, items: [{key: crl.pem, path: crl.pem}]}}`
			}
			vols = append(vols, parse(t, `{name: client-ca, projected: {sources: `+sources+`]}}`))
			mounts = append(mounts, parse(t, `{name: client-ca, mountPath: /etc/envoy-tls/client, readOnly: true}`))
		}
		spec := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		spec["volumes"] = slices.Insert(spec["volumes"].([]any), 2, vols...)
		c := spec["containers"].([]any)[0].(map[string]any)
		c["volumeMounts"] = append(c["volumeMounts"].([]any), mounts...)
	}
	g["gateway"] = d
	return g
}

// wantGatewayCertificate is the gateway's Certificate as the original's.
func wantGatewayCertificate(t *testing.T) obj {
	return parse(t, `
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: demo-gateway-tls
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: gateway-tls}
spec:
  secretName: demo-gateway-tls
  dnsNames: [demo-gateway, demo-gateway.firebolt, demo-gateway.firebolt.svc, demo-gateway.firebolt.svc.cluster.local]
  usages: [server auth]
  duration: 2160h0m0s
  renewBefore: 720h0m0s
  issuerRef: {name: ca, kind: ClusterIssuer, group: cert-manager.io}
  privateKey: {rotationPolicy: Always, encoding: PKCS8, algorithm: ECDSA, size: 384}
  secretTemplate:
    labels: {firebolt.io/instance: demo, firebolt.io/component: gateway-tls}
`)
}

// issued is a Certificate cert-manager has issued for its generation.
func issued(t *testing.T, c obj) obj {
	return c.with(t, "metadata.generation", 1, "status", map[string]any{
		"revision":   1,
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "observedGeneration": 1}},
	})
}

// rolledOut is a gateway Deployment whose every pod runs its template.
func rolledOut(t *testing.T, d obj) obj {
	return d.with(t, "metadata.generation", 2,
		"status", map[string]any{"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2})
}

func TestRunFunctionGatewayTLS(t *testing.T) {
	base := func(t *testing.T) map[string]obj {
		return merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID))
	}
	tlsListener := envoyconfig.Listener{TLS: true}
	closed := envoyconfig.Listener{Closed: true}
	createdAt := authNow.Format(time.RFC3339)
	tlsStatus := map[string]any{"secretName": "demo-gateway-tls", "mode": "TLS", "createdAt": createdAt}
	cases := map[string]struct {
		reason string
		req    func(t *testing.T) request
		want   func(t *testing.T) want
	}{
		"TighteningClosesTheListenerFirst": {
			reason: "A Ready plain gateway asked for TLS: the Certificate is composed, the listener is rendered closed and rolled with every plain pod stopped first; nothing is recorded served; the instance is Degraded until TLS is in place.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, tlsSpec(""), readyStatus), observed: observedRunning(t)}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), tlsGateway(t, closed, "", "", "", true), map[string]obj{"gateway-tls": wantGatewayCertificate(t)})
				ready := allReady(keys(res)...)
				ready["gateway-tls"] = false
				msg := "the gateway's client port is closed while every pod of the weaker posture stops; TLS (certificate from Secret demo-gateway-tls) follows"
				return want{
					status:     status("Degraded", derivedID, true, true),
					resources:  res,
					readyRes:   ready,
					conditions: append(conditionsReady(), cond("GatewayTLSReady", false, "StagingFailClosed", msg)),
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_WARNING, "Degraded",
						"FireboltInstance is Degraded: GatewayTLSReady: "+msg)},
					ttl: provisioningTTL,
				}
			},
		},
		"ClosedUntilTheCertificateIsIssued": {
			reason: "Every pod runs the closed listener but cert-manager has not issued the Certificate: the port stays closed.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["gateway"] = rolledOut(t, tlsGateway(t, closed, "", "", "", true)["gateway"])
				o["gateway-tls"] = wantGatewayCertificate(t)
				return request{xr: xr(t, tlsSpec(""), `{phase: Degraded, id: `+derivedID+`}`), observed: o}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), tlsGateway(t, closed, "", "", "", true), map[string]obj{"gateway-tls": wantGatewayCertificate(t)})
				ready := allReady(keys(res)...)
				ready["gateway-tls"] = false
				return want{
					status:    status("Degraded", derivedID, true, true),
					resources: res,
					readyRes:  ready,
					conditions: append(conditionsReady(), cond("GatewayTLSReady", false, "CertificatePending",
						"the gateway's client port stays closed until cert-manager issues Certificate demo-gateway-tls")),
					ttl: provisioningTTL,
				}
			},
		},
		"SecurePostureRecordedOnceClosed": {
			reason: "Every pod runs the closed listener and the Certificate is issued: TLS is recorded served and rolled as any change, old pods kept until new ones are ready.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["gateway"] = rolledOut(t, tlsGateway(t, closed, "", "", "", true)["gateway"])
				o["gateway-tls"] = issued(t, wantGatewayCertificate(t))
				return request{xr: xr(t, tlsSpec(""), `{phase: Degraded, id: `+derivedID+`}`), observed: o}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), tlsGateway(t, tlsListener, "demo-gateway-tls", "", "", false), map[string]obj{"gateway-tls": wantGatewayCertificate(t)})
				return want{
					status:    status("Degraded", derivedID, true, true).with(t, "gatewayTLS", tlsStatus),
					resources: res,
					readyRes:  allReady(keys(res)...),
					conditions: append(conditionsReady(), cond("GatewayTLSReady", false, "SecureRolloutPending",
						"waiting for every gateway pod to serve TLS (certificate from Secret demo-gateway-tls); a pod starts only once Secret(s) demo-gateway-tls (tls.crt, tls.key) exist with those keys")),
					ttl: provisioningTTL,
				}
			},
		},
		"ReadyOnceEveryPodServesIt": {
			reason: "Every pod serves the recorded TLS: GatewayTLSReady is True and the instance Ready again.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["gateway"] = rolledOut(t, tlsGateway(t, tlsListener, "demo-gateway-tls", "", "", false)["gateway"])
				o["gateway-tls"] = issued(t, wantGatewayCertificate(t))
				st := `{phase: Degraded, id: ` + derivedID + `, gatewayTLS: {secretName: demo-gateway-tls, mode: TLS, createdAt: "2026-08-01T10:00:00Z"}}`
				return request{xr: xr(t, tlsSpec(""), st), observed: o}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), tlsGateway(t, tlsListener, "demo-gateway-tls", "", "", false), map[string]obj{"gateway-tls": wantGatewayCertificate(t)})
				return want{
					status: status("Ready", derivedID, true, true).with(t, "gatewayTLS",
						map[string]any{"secretName": "demo-gateway-tls", "mode": "TLS", "createdAt": "2026-08-01T10:00:00Z"}),
					ready:      true,
					resources:  res,
					readyRes:   allReady(keys(res)...),
					conditions: append(conditionsReady(), cond("GatewayTLSReady", true, "Ready", "the gateway serves TLS (certificate from Secret demo-gateway-tls)")),
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_NORMAL, "Ready",
						"FireboltInstance is Ready: metadata service at "+metadataEndpoint+", gateway at "+gatewayEndpoint)},
					ttl: stableTTL,
				}
			},
		},
		"LooseningRollsDirectly": {
			reason: "Mutual TLS served, the spec drops the client CA: TLS is rendered and recorded at once, no staging.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["gateway"] = rolledOut(t, tlsGateway(t, envoyconfig.Listener{TLS: true, ClientCA: true}, "demo-gateway-tls", "clients", "", false)["gateway"])
				o["gateway-tls"] = issued(t, wantGatewayCertificate(t))
				st := `{phase: Ready, id: ` + derivedID + `, gatewayTLS: {secretName: demo-gateway-tls, mode: MutualTLS, clientCASecretName: clients, createdAt: "2026-08-01T10:00:00Z"}}`
				return request{xr: xr(t, tlsSpec(""), st), observed: o}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), tlsGateway(t, tlsListener, "demo-gateway-tls", "", "", false), map[string]obj{"gateway-tls": wantGatewayCertificate(t)})
				msg := "waiting for every gateway pod to serve TLS (certificate from Secret demo-gateway-tls); a pod starts only once Secret(s) demo-gateway-tls (tls.crt, tls.key) exist with those keys"
				return want{
					status:     status("Degraded", derivedID, true, true).with(t, "gatewayTLS", tlsStatus),
					resources:  res,
					readyRes:   allReady(keys(res)...),
					conditions: append(conditionsReady(), cond("GatewayTLSReady", false, "SecureRolloutPending", msg)),
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_WARNING, "Degraded",
						"FireboltInstance is Degraded: GatewayTLSReady: "+msg)},
					ttl: provisioningTTL,
				}
			},
		},
		"AMintedSecretIsRefused": {
			reason: "secretRef names the instance's own engine anchor Secret: TLSSpecInvalid with a warning, and the gateway keeps serving what status records (plain), unchanged otherwise.",
			req: func(t *testing.T) request {
				spec := `{metadata: {}, gateway: {}, tls: {gateway: {enabled: true, secretRef: {name: demo-engine-tls}}}}`
				return request{xr: xr(t, spec, readyStatus), observed: observedRunning(t)}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), wantGateway(t))
				msg := `spec.tls.gateway.secretRef.name: "demo-engine-tls" is a Secret this instance mints; name a Secret of yours`
				return want{
					status:     status("Degraded", derivedID, true, true),
					resources:  res,
					readyRes:   allReady(keys(res)...),
					conditions: append(conditionsReady(), cond("GatewayTLSReady", false, "TLSSpecInvalid", msg)),
					results: []*fnv1.Result{
						result(fnv1.Severity_SEVERITY_WARNING, "TLSSpecInvalid", msg),
						result(fnv1.Severity_SEVERITY_WARNING, "Degraded", "FireboltInstance is Degraded: GatewayTLSReady: "+msg),
					},
					ttl: provisioningTTL,
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
