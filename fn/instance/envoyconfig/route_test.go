package envoyconfig

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	lua "github.com/yuin/gopher-lua"
	"pgregory.net/rapid"
)

// A stand-in for the part of Envoy's Lua request-handle API the script uses:
// handle:headers() with get and replace, and handle:respond. Anything else the
// script might call is missing on purpose, so using it fails the tests.

// header is one request header; Envoy hands Lua lowercase names.
type header struct{ Key, Value string }

// localReply is a response the script sent instead of forwarding.
type localReply struct {
	Headers map[string]string
	Body    string
}

// outcome is the request as the next filter would see it, or the reply the
// script sent (then the headers are what the script left them as).
type outcome struct {
	Headers []header
	Reply   *localReply
}

type stream struct {
	headers []header
	reply   *localReply
}

// get joins repeated headers with commas, as Envoy does.
func (s *stream) get(key string) (string, bool) {
	var vals []string
	for _, h := range s.headers {
		if h.Key == key {
			vals = append(vals, h.Value)
		}
	}
	return strings.Join(vals, ","), len(vals) > 0
}

// replace sets the first occurrence and drops the rest; adds when absent.
func (s *stream) replace(key, value string) {
	out := s.headers[:0:0]
	done := false
	for _, h := range s.headers {
		if h.Key != key {
			out = append(out, h)
			continue
		}
		if !done {
			out = append(out, header{key, value})
			done = true
		}
	}
	if !done {
		out = append(out, header{key, value})
	}
	s.headers = out
}

type envoyStandIn struct {
	L *lua.LState
	// agent answers the script's httpCall; nil fails any call.
	agent func(call agentCall) map[string]string
	calls []agentCall
}

// agentCall is one httpCall the script made.
type agentCall struct {
	Cluster   string
	Headers   map[string]string
	Body      string
	TimeoutMS int
}

const (
	handleType  = "request_handle"
	headersType = "header_map"
)

func newEnvoy(t *testing.T, script string) *envoyStandIn {
	t.Helper()
	L := lua.NewState()
	t.Cleanup(L.Close)
	e := &envoyStandIn{L: L}

	streamOf := func(L *lua.LState) *stream {
		s, ok := L.CheckUserData(1).Value.(*stream)
		if !ok {
			L.ArgError(1, "not a request handle")
		}
		return s
	}
	handleMT := L.NewTypeMetatable(handleType)
	L.SetField(handleMT, "__index", L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"headers": func(L *lua.LState) int {
			ud := L.NewUserData()
			ud.Value = streamOf(L)
			L.SetMetatable(ud, L.GetTypeMetatable(headersType))
			L.Push(ud)
			return 1
		},
		"respond": func(L *lua.LState) int {
			s := streamOf(L)
			if s.reply != nil {
				L.RaiseError("respond() called twice")
			}
			r := &localReply{Headers: map[string]string{}, Body: L.CheckString(3)}
			L.CheckTable(2).ForEach(func(k, v lua.LValue) {
				ks, kok := k.(lua.LString)
				vs, vok := v.(lua.LString)
				if !kok || !vok {
					L.RaiseError("respond() headers must map strings to strings, got %s=%s", k.Type(), v.Type())
				}
				r.Headers[string(ks)] = string(vs)
			})
			if _, ok := r.Headers[":status"]; !ok {
				L.RaiseError("respond() without :status")
			}
			s.reply = r
			return 0
		},
		// httpCall(cluster, headers, body, timeout_ms) returns the reply's
		// headers and body, as Envoy's synchronous call does.
		"httpCall": func(L *lua.LState) int {
			streamOf(L)
			c := agentCall{Cluster: L.CheckString(2), Headers: map[string]string{}, Body: L.CheckString(4), TimeoutMS: L.CheckInt(5)}
			L.CheckTable(3).ForEach(func(k, v lua.LValue) { c.Headers[k.String()] = v.String() })
			e.calls = append(e.calls, c)
			if e.agent == nil {
				L.RaiseError("httpCall to %s without an agent", c.Cluster)
			}
			reply := L.NewTable()
			for k, v := range e.agent(c) {
				reply.RawSetString(k, lua.LString(v))
			}
			L.Push(reply)
			L.Push(lua.LString(""))
			return 2
		},
	}))
	headersMT := L.NewTypeMetatable(headersType)
	L.SetField(headersMT, "__index", L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"get": func(L *lua.LState) int {
			v, ok := streamOf(L).get(strings.ToLower(L.CheckString(2)))
			if !ok {
				L.Push(lua.LNil)
				return 1
			}
			L.Push(lua.LString(v))
			return 1
		},
		"replace": func(L *lua.LState) int {
			s := streamOf(L)
			if s.reply != nil {
				L.RaiseError("headers modified after respond()")
			}
			s.replace(strings.ToLower(L.CheckString(2)), L.CheckString(3))
			return 0
		},
	}))

	if err := L.DoString(script); err != nil {
		t.Fatalf("script does not load: %v", err)
	}
	return e
}

func (e *envoyStandIn) request(headers []header) (outcome, error) {
	s := &stream{headers: append([]header(nil), headers...)}
	ud := e.L.NewUserData()
	ud.Value = s
	e.L.SetMetatable(ud, e.L.GetTypeMetatable(handleType))
	err := e.L.CallByParam(lua.P{Fn: e.L.GetGlobal("envoy_on_request"), NRet: 0, Protect: true}, ud)
	return outcome{Headers: s.headers, Reply: s.reply}, err
}

// renderedScript is the Lua source exactly as Config ships it.
func renderedScript(t *testing.T, p Params) string {
	t.Helper()
	y, err := Config(p)
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	return luaScript(t, parse(t, y))
}

const testSuffix = "-service.analytics.svc.cluster.local:3473"

// request is a client request to the gateway with the given path and extra
// headers; the client's Host is the gateway's.
func request(path string, extra ...header) []header {
	return append([]header{
		{":method", "POST"},
		{":scheme", "http"},
		{":authority", "analytics-gateway.analytics.svc.cluster.local"},
		{":path", path},
	}, extra...)
}

// forwarded is the request pinned to engine's Service with the given path;
// after are the headers expected behind the pseudo-headers.
func forwarded(engine, path string, after ...header) outcome {
	return outcome{Headers: append([]header{
		{":method", "POST"},
		{":scheme", "http"},
		{":authority", engine + testSuffix},
		{":path", path},
	}, after...)}
}

// rejected is the request left as it was, answered with a 400 and reason.
func rejected(in []header, reason string) outcome {
	return outcome{Headers: in, Reply: &localReply{Headers: map[string]string{":status": "400"}, Body: reason}}
}

func engineHeader(v string) header { return header{"x-firebolt-engine", v} }

const (
	reasonMissing     = "invalid or missing engine selector"
	reasonBadHeader   = "invalid X-Firebolt-Engine header"
	reasonConflict    = "conflicting engine selectors"
	reasonMultiple    = "multiple engine query parameters"
	reasonBadEncoding = "invalid engine query parameter encoding"
)

// routeCase is a request and what the script must make of it.
type routeCase struct {
	in   []header
	want outcome
}

// selectionCases are the engine selector's cases, for a script pinning
// engines to <engine>-service: every engine they forward to has no route
// of its own.
func selectionCases() map[string]routeCase {
	longest := strings.Repeat("a", 63)
	tooLong := strings.Repeat("a", 64)

	return map[string]routeCase{
		// Header routing.
		"HeaderSelectsEngine": {
			in:   request("/?output_format=JSON", engineHeader("sales")),
			want: forwarded("sales", "/?output_format=JSON", engineHeader("sales")),
		},
		"HeaderWithDigitsAndHyphens": {
			in:   request("/", engineHeader("etl-2-nightly")),
			want: forwarded("etl-2-nightly", "/", engineHeader("etl-2-nightly")),
		},
		"HeaderLongestLabel": {
			in:   request("/", engineHeader(longest)),
			want: forwarded(longest, "/", engineHeader(longest)),
		},
		"AuthorityAimedElsewhereIsPinned": {
			in: []header{
				{":method", "GET"}, {":scheme", "http"}, {":authority", "metadata.kube-system.svc:7000"}, {":path", "/"},
				engineHeader("sales"),
			},
			want: outcome{Headers: []header{
				{":method", "GET"}, {":scheme", "http"}, {":authority", "sales" + testSuffix}, {":path", "/"},
				engineHeader("sales"),
			}},
		},
		"OtherHeadersKept": {
			in:   request("/", header{"authorization", "Bearer x"}, engineHeader("sales"), header{"content-type", "text/plain"}),
			want: forwarded("sales", "/", header{"authorization", "Bearer x"}, engineHeader("sales"), header{"content-type", "text/plain"}),
		},

		// Query parameter routing; the parameter never reaches the engine.
		"QueryOnlyParameter": {
			in:   request("/?engine=sales"),
			want: forwarded("sales", "/", engineHeader("sales")),
		},
		"QueryFirstParameter": {
			in:   request("/?engine=sales&database=db1&output_format=JSON"),
			want: forwarded("sales", "/?database=db1&output_format=JSON", engineHeader("sales")),
		},
		"QueryMiddleParameter": {
			in:   request("/?database=db1&engine=sales&output_format=JSON"),
			want: forwarded("sales", "/?database=db1&output_format=JSON", engineHeader("sales")),
		},
		"QueryLastParameter": {
			in:   request("/?database=db1&output_format=JSON&engine=sales"),
			want: forwarded("sales", "/?database=db1&output_format=JSON", engineHeader("sales")),
		},
		"QueryOnLongerPath": {
			in:   request("/query/v1?engine=sales&x=1"),
			want: forwarded("sales", "/query/v1?x=1", engineHeader("sales")),
		},
		"QueryTrailingAmpersand": {
			in:   request("/?engine=sales&"),
			want: forwarded("sales", "/", engineHeader("sales")),
		},
		"QueryEncodedValue": {
			in:   request("/?engine=sa%6ces&a=1"),
			want: forwarded("sales", "/?a=1", engineHeader("sales")),
		},
		"QueryEncodedValueUppercaseHex": {
			in:   request("/?engine=etl%2D2"),
			want: forwarded("etl-2", "/", engineHeader("etl-2")),
		},
		"QueryEncodedKey": {
			in:   request("/?a=1&en%67ine=sales"),
			want: forwarded("sales", "/?a=1", engineHeader("sales")),
		},
		"QueryOtherParametersKeptVerbatim": {
			in:   request("/?query=SELECT%201%2B1&engine=sales&note=a+b&flag&x=%zz"),
			want: forwarded("sales", "/?query=SELECT%201%2B1&note=a+b&flag&x=%zz", engineHeader("sales")),
		},
		"QueryKeyIsExactlyEngine": {
			in:   request("/?engines=x&my_engine=y&engine=sales"),
			want: forwarded("sales", "/?engines=x&my_engine=y", engineHeader("sales")),
		},

		// Both selectors.
		"HeaderAndQuerySameValue": {
			in:   request("/?a=1&engine=sales", engineHeader("sales")),
			want: forwarded("sales", "/?a=1", engineHeader("sales")),
		},
		"HeaderAndQueryConflict": {
			in:   request("/?engine=finance", engineHeader("sales")),
			want: rejected(request("/?engine=finance", engineHeader("sales")), reasonConflict),
		},
		"HeaderAndInvalidQueryConflict": {
			in:   request("/?engine=Sales", engineHeader("sales")),
			want: rejected(request("/?engine=Sales", engineHeader("sales")), reasonConflict),
		},
		"InvalidHeaderReportedBeforeQuery": {
			in:   request("/?engine=sales", engineHeader("Sales")),
			want: rejected(request("/?engine=sales", engineHeader("Sales")), reasonBadHeader),
		},

		// Invalid names in the header.
		"HeaderUppercase": {
			in:   request("/", engineHeader("Sales")),
			want: rejected(request("/", engineHeader("Sales")), reasonBadHeader),
		},
		"HeaderTooLong": {
			in:   request("/", engineHeader(tooLong)),
			want: rejected(request("/", engineHeader(tooLong)), reasonBadHeader),
		},
		"HeaderDots": {
			in:   request("/", engineHeader("sales.other-ns")),
			want: rejected(request("/", engineHeader("sales.other-ns")), reasonBadHeader),
		},
		"HeaderEmpty": {
			in:   request("/", engineHeader("")),
			want: rejected(request("/", engineHeader("")), reasonBadHeader),
		},
		"HeaderLeadingHyphen": {
			in:   request("/", engineHeader("-sales")),
			want: rejected(request("/", engineHeader("-sales")), reasonBadHeader),
		},
		"HeaderTrailingHyphen": {
			in:   request("/", engineHeader("sales-")),
			want: rejected(request("/", engineHeader("sales-")), reasonBadHeader),
		},
		"HeaderUnderscore": {
			in:   request("/", engineHeader("sales_eu")),
			want: rejected(request("/", engineHeader("sales_eu")), reasonBadHeader),
		},
		"HeaderPort": {
			in:   request("/", engineHeader("sales:80")),
			want: rejected(request("/", engineHeader("sales:80")), reasonBadHeader),
		},
		"HeaderSlash": {
			in:   request("/", engineHeader("sales/x")),
			want: rejected(request("/", engineHeader("sales/x")), reasonBadHeader),
		},
		"HeaderRepeated": {
			in:   request("/", engineHeader("sales"), engineHeader("finance")),
			want: rejected(request("/", engineHeader("sales"), engineHeader("finance")), reasonBadHeader),
		},

		// Invalid names in the query.
		"QueryUppercase": {
			in:   request("/?engine=Sales"),
			want: rejected(request("/?engine=Sales"), reasonMissing),
		},
		"QueryTooLong": {
			in:   request("/?engine=" + tooLong),
			want: rejected(request("/?engine="+tooLong), reasonMissing),
		},
		"QueryDots": {
			in:   request("/?engine=sales.kube-system"),
			want: rejected(request("/?engine=sales.kube-system"), reasonMissing),
		},
		"QueryEncodedDot": {
			in:   request("/?engine=sales%2Ekube-system"),
			want: rejected(request("/?engine=sales%2Ekube-system"), reasonMissing),
		},
		"QueryPlus": {
			in:   request("/?engine=sa+les"),
			want: rejected(request("/?engine=sa+les"), reasonMissing),
		},
		"QueryEmptyValue": {
			in:   request("/?engine=&a=1"),
			want: rejected(request("/?engine=&a=1"), reasonMissing),
		},
		"QueryKeyWithoutValue": {
			in:   request("/?engine"),
			want: rejected(request("/?engine"), reasonMissing),
		},
		"QueryRepeated": {
			in:   request("/?engine=sales&engine=finance"),
			want: rejected(request("/?engine=sales&engine=finance"), reasonMultiple),
		},
		"QueryRepeatedSameValue": {
			in:   request("/?engine=sales&en%67ine=sales"),
			want: rejected(request("/?engine=sales&en%67ine=sales"), reasonMultiple),
		},
		"QueryTruncatedEscape": {
			in:   request("/?engine=sales%2"),
			want: rejected(request("/?engine=sales%2"), reasonBadEncoding),
		},
		"QueryNonHexEscape": {
			in:   request("/?engine=sa%zzles"),
			want: rejected(request("/?engine=sa%zzles"), reasonBadEncoding),
		},
		"QueryBareEscape": {
			in:   request("/?engine=%"),
			want: rejected(request("/?engine=%"), reasonBadEncoding),
		},

		// No selector at all: the original's answer.
		"Missing": {
			in:   request("/"),
			want: rejected(request("/"), reasonMissing),
		},
		"MissingWithOtherParameters": {
			in:   request("/?database=db1"),
			want: rejected(request("/?database=db1"), reasonMissing),
		},
		"MissingEmptyQuery": {
			in:   request("/?"),
			want: rejected(request("/?"), reasonMissing),
		},
		// The health_check filter answers /healthz before Lua runs. Should
		// the script see it anyway, it must not forward it: passing it on
		// unpinned would let the proxy resolve the client's own Host.
		"HealthzIsNeverForwardedUnpinned": {
			in:   request("/healthz"),
			want: rejected(request("/healthz"), reasonMissing),
		},
	}
}

func TestRouteScript(t *testing.T) {
	runRouteCases(t, Params{Namespace: "analytics"}, selectionCases())
}

// runRouteCases runs cases through the script rendered for p, in sorted
// order through one Lua state, as in an Envoy worker: a request must not
// leave anything behind that changes the next one.
func runRouteCases(t *testing.T, p Params, cases map[string]routeCase) {
	t.Helper()
	envoy := newEnvoy(t, renderedScript(t, p))
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			got, err := envoy.request(tc.in)
			if err != nil {
				t.Fatalf("envoy_on_request: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("envoy_on_request(%v): -want +got:\n%s", tc.in, diff)
			}
		})
	}
}

// The script's only global is the entry point Envoy calls; everything else is
// local, so no request can leave state behind for the next.
func TestRouteScriptDefinesOnlyEntryPoint(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	before := map[string]bool{}
	L.G.Global.ForEach(func(k, _ lua.LValue) { before[k.String()] = true })

	for name, p := range map[string]Params{
		"OneCluster": {Namespace: "analytics"},
		"Upstream":   {Namespace: "analytics", Upstream: upstreamForScript},
	} {
		t.Run(name, func(t *testing.T) {
			envoy := newEnvoy(t, renderedScript(t, p))
			for _, in := range [][]header{request("/?engine=sales"), request("/?engine=ops"), request("/"), request("/?engine=%")} {
				if _, err := envoy.request(in); err != nil {
					t.Fatalf("envoy_on_request: %v", err)
				}
			}
			var added []string
			envoy.L.G.Global.ForEach(func(k, _ lua.LValue) {
				if !before[k.String()] {
					added = append(added, k.String())
				}
			})
			sort.Strings(added)
			if diff := cmp.Diff([]string{"envoy_on_request"}, added); diff != "" {
				t.Errorf("globals the script defines: -want +got:\n%s", diff)
			}
		})
	}
}

// The authority always names an engine Service of the instance's own
// namespace and cluster domain.
func TestRouteScriptAuthorityFollowsInstance(t *testing.T) {
	cases := map[string]struct {
		params Params
		want   string
	}{
		"DefaultDomain": {params: Params{Namespace: "team-a"}, want: "sales-service.team-a.svc.cluster.local:3473"},
		"CustomDomain":  {params: Params{Namespace: "team-b", ClusterDomain: "corp.example"}, want: "sales-service.team-b.svc.corp.example:3473"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			envoy := newEnvoy(t, renderedScript(t, tc.params))
			got, err := envoy.request([]header{{":authority", "gw"}, {":path", "/?engine=sales"}})
			if err != nil {
				t.Fatalf("envoy_on_request: %v", err)
			}
			want := outcome{Headers: []header{{":authority", tc.want}, {":path", "/"}, engineHeader("sales")}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}

// Wherever engine= sits among any other parameters, exactly it is removed and
// the rest reach the engine unchanged and in order.
func TestRouteScriptStripsOnlyEngineParameter(t *testing.T) {
	envoy := newEnvoy(t, renderedScript(t, Params{Namespace: "analytics"}))
	rapid.Check(t, func(t *rapid.T) {
		engine := rapid.StringMatching(`[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?`).Draw(t, "engine")
		base := rapid.StringMatching(`/[a-z0-9/]{0,12}`).Draw(t, "base")
		param := rapid.Custom(func(t *rapid.T) string {
			key := rapid.StringMatching(`[a-z_]{1,8}`).Filter(func(k string) bool { return k != "engine" }).Draw(t, "key")
			if rapid.Bool().Draw(t, "bare") {
				return key
			}
			return key + "=" + rapid.StringMatching(`[A-Za-z0-9%+=._~-]{0,10}`).Draw(t, "value")
		})
		others := rapid.SliceOfN(param, 0, 5).Draw(t, "others")
		at := rapid.IntRange(0, len(others)).Draw(t, "at")
		withHeader := rapid.Bool().Draw(t, "withHeader")

		fields := append(append(append([]string{}, others[:at]...), "engine="+engine), others[at:]...)
		in := request(base + "?" + strings.Join(fields, "&"))
		after := []header{engineHeader(engine)}
		if withHeader {
			in = append(in, engineHeader(engine))
		}
		wantPath := base
		if len(others) > 0 {
			wantPath = base + "?" + strings.Join(others, "&")
		}

		got, err := envoy.request(in)
		if err != nil {
			t.Fatalf("envoy_on_request: %v", err)
		}
		if diff := cmp.Diff(forwarded(engine, wantPath, after...), got); diff != "" {
			t.Fatalf("envoy_on_request(%v): -want +got:\n%s", in, diff)
		}
	})
}
