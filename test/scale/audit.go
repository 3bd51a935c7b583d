package scale

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/crossplane/function-sdk-go/errors"
)

// maxAuditLine bounds one line of the audit log; a Metadata-level event is
// well under a kilobyte.
const maxAuditLine = 1 << 20

// A Writer is who made a write, as the audit log tells: the client's
// program (the user agent's first word) and, where the request named one,
// its field manager with per-object suffixes cut off, which tells
// Crossplane's composite reconciler from its claim syncer.
type Writer struct {
	Agent   string
	Manager string
}

func (w Writer) String() string {
	if w.Manager == "" {
		return w.Agent
	}
	return w.Agent + " (" + w.Manager + ")"
}

// WriteKey is one row of the writes by writer: who, to what, how.
type WriteKey struct {
	Writer Writer
	Key    Key
}

// AuditWrites counts writes per WriteKey.
type AuditWrites map[WriteKey]int

// ParseAudit reads kube-apiserver's JSON audit log (harness.WithAuditLog)
// and counts the writes whose response was sent in [from, to), by writer,
// resource and verb. Requests that are not writes, and lines that are not
// audit events, are skipped; a line longer than maxAuditLine is an error.
func ParseAudit(r io.Reader, from, to time.Time) (AuditWrites, error) {
	out := AuditWrites{}
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), maxAuditLine)
	for s.Scan() {
		var ev auditv1.Event
		if err := json.Unmarshal(s.Bytes(), &ev); err != nil || ev.ObjectRef == nil {
			continue
		}
		at := ev.StageTimestamp.Time
		if at.Before(from) || !at.Before(to) {
			continue
		}
		verb := auditVerb(ev.Verb, ev.RequestURI)
		if !IsWrite(verb) {
			continue
		}
		k := WriteKey{
			Writer: Writer{Agent: agent(ev.UserAgent), Manager: manager(ev.RequestURI)},
			Key:    Key{Group: ev.ObjectRef.APIGroup, Resource: ev.ObjectRef.Resource, Subresource: ev.ObjectRef.Subresource, Verb: verb},
		}
		out[k]++
	}
	if err := s.Err(); err != nil {
		return nil, errors.Wrap(err, "cannot read the audit log")
	}
	return out, nil
}

// auditVerb is the metrics' verb for an audit event's. The audit log
// calls a server-side apply a patch and does not record the patch type; the
// appliers here (Crossplane, client-go's Apply) all force, so a patch that
// asks to force counts as APPLY and any other as PATCH.
func auditVerb(verb, uri string) string {
	switch verb {
	case "create":
		return "POST"
	case "update":
		return "PUT"
	case "patch":
		if query(uri).Has("force") {
			return "APPLY"
		}
		return "PATCH"
	case "delete":
		return "DELETE"
	case "deletecollection":
		return "DELETECOLLECTION"
	}
	return strings.ToUpper(verb)
}

func query(uri string) url.Values {
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return url.Values{}
	}
	return u.Query()
}

// agent is the program of a user agent: "crossplane/v2.4.0 (linux/amd64)
// kubernetes/$Format" is "crossplane". client-go names a program by its
// binary, and the pinned tools' binaries carry their version and a hash
// ("crossplane-core-v2.4.0-f893fb202a34"), which is cut off.
func agent(ua string) string {
	name, _, _ := strings.Cut(ua, " ")
	name, _, _ = strings.Cut(name, "/")
	if m := versionSuffix.FindStringIndex(name); m != nil {
		name = name[:m[0]]
	}
	if name == "" {
		return "(none)"
	}
	return name
}

// versionSuffix is a tool binary's "-v<version>-<hash>" ending.
var versionSuffix = regexp.MustCompile(`-v[0-9][0-9A-Za-z.+-]*-[0-9a-f]{12}$`)

// manager is the request's field manager without what varies per object:
// Crossplane's composed-resource managers end in the composite's UID.
func manager(uri string) string {
	m := query(uri).Get("fieldManager")
	if i := strings.Index(m, "/composed/"); i >= 0 {
		return m[:i] + "/composed/…"
	}
	return m
}

// Total is every write counted.
func (a AuditWrites) Total() int {
	n := 0
	for _, v := range a {
		n += v
	}
	return n
}

// ByWriter sums the writes of each writer.
func (a AuditWrites) ByWriter() map[Writer]int {
	out := map[Writer]int{}
	for k, v := range a {
		out[k.Writer] += v
	}
	return out
}

// AuditMarkdown renders the writes of each phase by writer and then by writer,
// resource and verb (the top rows, the rest summed), per engine.
func AuditMarkdown(phases []string, writes []AuditWrites, engines, top int) string {
	var b strings.Builder
	b.WriteString("API writes per engine by writer (kube-apiserver's audit log):\n\n")
	header(&b, []string{"writer"}, phases)
	per := func(n int) string { return fmt.Sprintf("%.1f", float64(n)/float64(max(engines, 1))) }
	byWriter := make([]map[Writer]int, len(writes))
	writers := map[Writer]int{}
	for i, w := range writes {
		byWriter[i] = w.ByWriter()
		for k, v := range byWriter[i] {
			writers[k] += v
		}
	}
	for _, w := range sortedBy(writers, func(w Writer) string { return w.String() }) {
		fmt.Fprintf(&b, "| %s |", w)
		for _, ph := range byWriter {
			fmt.Fprintf(&b, " %s |", per(ph[w]))
		}
		b.WriteString("\n")
	}
	b.WriteString("| all |")
	for _, ph := range writes {
		fmt.Fprintf(&b, " %s |", per(ph.Total()))
	}
	b.WriteString("\n\nAPI writes per engine by writer, resource and verb:\n\n")
	header(&b, []string{"writer", "resource", "verb"}, phases)
	rows := map[WriteKey]int{}
	for _, w := range writes {
		for k, v := range w {
			rows[k] += v
		}
	}
	keys := sortedBy(rows, func(k WriteKey) string { return k.Writer.String() + " " + k.Key.String() })
	rest := make([]int, len(writes))
	for i, k := range keys {
		if i >= top {
			for j, ph := range writes {
				rest[j] += ph[k]
			}
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s |", k.Writer, k.Key.ResourceName(), k.Key.Verb)
		for _, ph := range writes {
			fmt.Fprintf(&b, " %s |", per(ph[k]))
		}
		b.WriteString("\n")
	}
	if len(keys) > top {
		fmt.Fprintf(&b, "| the other %d rows | | |", len(keys)-top)
		for _, n := range rest {
			fmt.Fprintf(&b, " %s |", per(n))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// header writes a table's header: the named columns, then one numeric
// column per phase.
func header(b *strings.Builder, names, phases []string) {
	b.WriteString("|")
	for _, n := range append(append([]string(nil), names...), phases...) {
		fmt.Fprintf(b, " %s |", n)
	}
	b.WriteString("\n|")
	for range names {
		b.WriteString("---|")
	}
	for range phases {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
}

// sortedBy orders m's keys by their counts, largest first, then by name.
func sortedBy[K comparable](m map[K]int, name func(K) string) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b K) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return cmp.Compare(name(a), name(b))
	})
	return keys
}
