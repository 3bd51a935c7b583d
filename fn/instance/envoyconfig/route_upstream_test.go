package envoyconfig

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// upstreamForScript reaches engines over TLS by default, ops over plain
// HTTP through ops-next (switching back to plain) and finance over plain
// HTTP at its own Service. No engine selectionCases forwards to has a
// route.
var upstreamForScript = Upstream{TLS: true, Routes: []EngineRoute{
	{Engine: "finance", Service: "finance-service"},
	{Engine: "ops", Service: "ops-next"},
}}

func upstreamHeader(cluster string) header { return header{upstreamClusterHeader, cluster} }

// pinned is a client request (request's pseudo-headers) forwarded to
// authority with the given path; after are the headers behind them.
func pinned(authority, path string, after ...header) outcome {
	return outcome{Headers: append([]header{
		{":method", "POST"},
		{":scheme", "http"},
		{":authority", authority},
		{":path", path},
	}, after...)}
}

// With upstream routing the engine selector is the same: the same requests
// are rejected for the same reasons, and those let through go to the same
// <engine>-service, stamped with the default cluster.
func TestRouteScriptUpstreamKeepsSelection(t *testing.T) {
	cases := selectionCases()
	for name, tc := range cases {
		if tc.want.Reply == nil {
			tc.want.Headers = append(slices.Clone(tc.want.Headers), upstreamHeader(dfpTLSClusterName))
			cases[name] = tc
		}
	}
	runRouteCases(t, Params{Namespace: "analytics", Upstream: upstreamForScript}, cases)
}

// An engine with a route goes to its Service and cluster, one without to
// <engine>-service and the default cluster, and the cluster header is the
// script's, whatever the client sent: the admin and wake agent clusters
// cannot be named.
func TestRouteScriptPicksServiceAndCluster(t *testing.T) {
	const (
		sales   = "sales-service.analytics.svc.cluster.local:3473"
		opsNext = "ops-next.analytics.svc.cluster.local:3473"
		finance = "finance-service.analytics.svc.cluster.local:3473"
	)
	tlsDefault := map[string]routeCase{
		"UnroutedEngineGoesToDefault": {
			in:   request("/?engine=sales"),
			want: pinned(sales, "/", engineHeader("sales"), upstreamHeader(dfpTLSClusterName)),
		},
		"RoutedEngineGoesToItsServiceAndCluster": {
			in:   request("/?engine=ops&a=1"),
			want: pinned(opsNext, "/?a=1", engineHeader("ops"), upstreamHeader(dfpClusterName)),
		},
		"RoutedByHeader": {
			in:   request("/", engineHeader("ops")),
			want: pinned(opsNext, "/", engineHeader("ops"), upstreamHeader(dfpClusterName)),
		},
		"RoutedToOwnServiceOverOtherProtocol": {
			in:   request("/?engine=finance"),
			want: pinned(finance, "/", engineHeader("finance"), upstreamHeader(dfpClusterName)),
		},
		"ClientNamesAdminCluster": {
			in:   request("/?engine=sales", upstreamHeader(adminClusterName)),
			want: pinned(sales, "/", upstreamHeader(dfpTLSClusterName), engineHeader("sales")),
		},
		"ClientNamesWakeAgentCluster": {
			in:   request("/?engine=ops", upstreamHeader(wakeAgentClusterName)),
			want: pinned(opsNext, "/", upstreamHeader(dfpClusterName), engineHeader("ops")),
		},
		"ClientNamesOtherEngineCluster": {
			in:   request("/", engineHeader("ops"), upstreamHeader(dfpTLSClusterName)),
			want: pinned(opsNext, "/", engineHeader("ops"), upstreamHeader(dfpClusterName)),
		},
		"ClientNamesSubCluster": {
			in:   request("/?engine=sales", upstreamHeader("DFPCluster:metadata.kube-system.svc:7000")),
			want: pinned(sales, "/", upstreamHeader(dfpTLSClusterName), engineHeader("sales")),
		},
		"ClientSendsEmptyCluster": {
			in:   request("/?engine=sales", upstreamHeader("")),
			want: pinned(sales, "/", upstreamHeader(dfpTLSClusterName), engineHeader("sales")),
		},
		"ClientRepeatsClusterHeader": {
			in:   request("/?engine=sales", upstreamHeader(adminClusterName), upstreamHeader(wakeAgentClusterName)),
			want: pinned(sales, "/", upstreamHeader(dfpTLSClusterName), engineHeader("sales")),
		},
		"RejectedRequestIsNeverRouted": {
			in:   request("/", upstreamHeader(adminClusterName)),
			want: rejected(request("/", upstreamHeader(adminClusterName)), reasonMissing),
		},
		"RejectedInvalidEngineWithClusterHeader": {
			in:   request("/?engine=admin_stats", upstreamHeader(adminClusterName)),
			want: rejected(request("/?engine=admin_stats", upstreamHeader(adminClusterName)), reasonMissing),
		},
	}
	t.Run("TLSDefault", func(t *testing.T) {
		runRouteCases(t, Params{Namespace: "analytics", Upstream: upstreamForScript}, tlsDefault)
	})

	plainDefault := map[string]routeCase{
		"RoutedEngineGoesToTLS": {
			in:   request("/?engine=sales"),
			want: pinned("sales-next.team-b.svc.corp.example:3473", "/", engineHeader("sales"), upstreamHeader(dfpTLSClusterName)),
		},
		"UnroutedEngineStaysPlain": {
			in:   request("/?engine=etl", upstreamHeader(dfpTLSClusterName)),
			want: pinned("etl-service.team-b.svc.corp.example:3473", "/", upstreamHeader(dfpClusterName), engineHeader("etl")),
		},
		"ConflictStillRejected": {
			in:   request("/?engine=sales", engineHeader("etl")),
			want: rejected(request("/?engine=sales", engineHeader("etl")), reasonConflict),
		},
	}
	t.Run("PlainDefaultTLSRoute", func(t *testing.T) {
		runRouteCases(t, Params{Namespace: "team-b", ClusterDomain: "corp.example", Upstream: plainDefaultTLSRoute}, plainDefault)
	})
}

// With upstream routing the script still asks the wake agent as its last
// step, after it has pinned the request.
func TestRouteScriptUpstreamAsksTheWakeAgent(t *testing.T) {
	hold := agentCall{
		Cluster:   wakeAgentClusterName,
		Headers:   map[string]string{":method": "GET", ":path": "/hold?engine=ops", ":authority": "wake-agent"},
		TimeoutMS: 125000,
	}
	stamped := pinned("ops-next.analytics.svc.cluster.local:3473", "/", engineHeader("ops"), upstreamHeader(dfpClusterName))
	held := stamped
	held.Reply = &localReply{
		Headers: map[string]string{":status": "503", "retry-after": "5", "x-firebolt-wake-decision": "timeout"},
		Body:    "engine is not available; retry shortly",
	}
	cases := map[string]struct {
		agent map[string]string
		want  outcome
	}{
		"Ready":    {agent: map[string]string{":status": "200", "x-firebolt-wake-decision": "ready"}, want: stamped},
		"TimedOut": {agent: map[string]string{":status": "503", "x-firebolt-wake-decision": "timeout", "retry-after": "5"}, want: held},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			envoy := newEnvoy(t, renderedScript(t, Params{Namespace: "analytics", WakeAgent: true, Upstream: upstreamForScript}))
			envoy.agent = func(agentCall) map[string]string { return tc.agent }
			got, err := envoy.request(request("/?engine=ops"))
			if err != nil {
				t.Fatalf("envoy_on_request: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("envoy_on_request: -want +got:\n%s", diff)
			}
			if diff := cmp.Diff([]agentCall{hold}, envoy.calls); diff != "" {
				t.Errorf("calls to the agent: -want +got:\n%s", diff)
			}
		})
	}
}
