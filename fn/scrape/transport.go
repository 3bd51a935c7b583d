package scrape

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/crossplane/function-sdk-go/errors"
)

// A non-200 body is only evidence for a human; the original quoted at most
// 512 bytes of it, we quote less so a condition message stays short.
const (
	errorBodyReadBytes = 512
	errorSnippetBytes  = 200
)

// Ask for the classic text format; a server that answers otherwise is still
// decoded by its Content-Type.
const acceptHeader = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// NewPodIPHTTPClient returns the client the PodIP mode uses when New is given
// none, bounded as the original's: 10 s in total, 3 s to dial and to the
// response header, no keep-alives (pods come and go between checks), no
// proxy from the environment (pod IPs are cluster-internal), no redirects.
func NewPodIPHTTPClient() *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext:           (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
			ResponseHeaderTimeout: 3 * time.Second,
			DisableKeepAlives:     true,
		},
		CheckRedirect: refuseRedirect,
	}
}

// refuseRedirect hands the 3xx back as the response, which then fails as a
// non-200. Following it could carry the function's API-server credentials,
// which its transport adds to every request, to wherever a pod points.
func refuseRedirect(*http.Request, []*http.Request) error {
	return http.ErrUseLastResponse
}

// withoutRedirects copies c so the caller's client is left as it was.
func withoutRedirects(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	cp := *c
	cp.CheckRedirect = refuseRedirect
	return &cp
}

// transport knows how to reach one pod's metrics endpoint.
type transport struct {
	client *http.Client
	url    func(pod *corev1.Pod) (string, error)
}

// apiserverProxy builds /api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/metrics
// with the clientset's REST client and sends it with that client's
// authenticated HTTP client. The request is sent directly rather than with
// Request.Do or Stream because those read an error body whole and hide the
// Content-Type; and so client-side QPS throttling does not apply here:
// Options.Concurrency is the bound instead.
func apiserverProxy(kube Kube, port int) (transport, error) {
	ri, err := restClient(kube)
	if err != nil {
		return transport{}, err
	}
	// Proxying needs the concrete client's authenticated HTTP client.
	rc, ok := ri.(*rest.RESTClient)
	if !ok {
		return transport{}, errors.New("the Kubernetes client has no REST client to proxy through")
	}
	return transport{
		client: withoutRedirects(rc.Client),
		url: func(pod *corev1.Pod) (string, error) {
			req := rc.Get().
				Namespace(pod.Namespace).
				Resource("pods").
				Name(pod.Name + ":" + strconv.Itoa(port)).
				SubResource("proxy").
				Suffix(MetricsPath)
			if err := req.Error(); err != nil {
				return "", errors.Wrap(err, "cannot build pods/proxy request")
			}
			return req.URL().String(), nil
		},
	}, nil
}

func podIP(c *http.Client, port int) transport {
	return transport{
		client: withoutRedirects(c),
		url: func(pod *corev1.Pod) (string, error) {
			if pod.Status.PodIP == "" {
				return "", errors.New("pod has no IP address yet")
			}
			u := url.URL{Scheme: "http", Host: net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(port)), Path: MetricsPath}
			return u.String(), nil
		},
	}
}

// fetch GETs a pod's metrics and returns the body, at most limit bytes, and
// its Content-Type.
func (t transport) fetch(ctx context.Context, pod *corev1.Pod, limit int64) ([]byte, string, error) {
	u, err := t.url(pod)
	if err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", errors.Wrap(err, "cannot build metrics request")
	}
	req.Header.Set("Accept", acceptHeader)
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, "", withoutURL(err)
	}
	defer resp.Body.Close() //nolint:errcheck // Nothing useful to do with a close error on a read-only body.

	if resp.StatusCode != http.StatusOK {
		return nil, "", withCause(CauseHTTPStatus, statusError(resp))
	}
	// One byte past the limit tells an oversized body from one exactly at it;
	// a truncated body must never be parsed, it might lack a busy gauge.
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, "", errors.Wrap(withoutURL(err), "cannot read metrics body")
	}
	if int64(len(body)) > limit {
		return nil, "", withCause(CauseBodyTooLarge, errors.Errorf("metrics body exceeds the limit of %d bytes", limit))
	}
	return body, resp.Header.Get("Content-Type"), nil
}

// withoutURL drops net/http's `Get "<url>": ` prefix: the pod is named by
// the caller, and the URL (API server host, port) only makes messages long
// and unstable.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyReadBytes))
	s := snippet(b)
	if s == "" {
		return errors.Errorf("unexpected HTTP status %d", resp.StatusCode)
	}
	return errors.Errorf("unexpected HTTP status %d: %s", resp.StatusCode, s)
}

// snippet makes a short, printable excerpt of an error body. The API server
// answers proxy failures with a metav1.Status whose message is the useful
// part ("error trying to reach service: ..."), so that is preferred.
func snippet(b []byte) string {
	var st metav1.Status
	if json.Unmarshal(b, &st) == nil && st.Kind == "Status" && st.Message != "" {
		b = []byte(st.Message)
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if len(s) > errorSnippetBytes {
		cut := errorSnippetBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	if s == "" {
		return ""
	}
	return strconv.Quote(s)
}
