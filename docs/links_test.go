package docs_test

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/internal/markdown"
)

// pendingPages are pages another branch writes: a link to one is accepted
// while it does not exist yet, and checked like any other once it does.
// Delete an entry once its page is merged.
var pendingPages = map[string]string{}

// TestRelativeLinksResolve fails on a relative link of README.md or a page
// under docs/ whose file, or heading anchor, does not exist.
func TestRelativeLinksResolve(t *testing.T) {
	const root = ".."
	files, err := pages(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d pages: the walk no longer sees docs/", len(files))
	}
	for _, p := range check(root, files, pendingPages) {
		t.Error(p)
	}
}

// TestEveryPageIsOneClickAway fails when a page under docs/ is not linked
// from both the README and the docs index.
func TestEveryPageIsOneClickAway(t *testing.T) {
	const root = ".."
	files, err := pages(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{"README.md", "docs/README.md"} {
		b, err := os.ReadFile(filepath.Join(root, from))
		if err != nil {
			t.Fatal(err)
		}
		linked := map[string]bool{}
		for _, l := range links(string(b)) {
			if target, _, ok := relative(from, l); ok {
				linked[target] = true
			}
		}
		for _, f := range files {
			if strings.HasPrefix(f, "docs/") && f != from && path.Dir(f) == "docs" && !linked[f] {
				t.Errorf("%s does not link to %s", from, f)
			}
		}
		for p := range pendingPages {
			if !linked[p] {
				t.Errorf("%s does not link to %s", from, p)
			}
		}
	}
}

// pages are README.md and every markdown file under docs/, slash-separated
// and relative to root, sorted.
func pages(root string) ([]string, error) {
	out := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	sort.Strings(out)
	return out, err
}

// check lists every link of files (relative to root) that leads nowhere.
func check(root string, files []string, pending map[string]string) []string {
	var problems []string
	anchors := map[string]map[string]bool{}
	anchorsOf := func(f string) (map[string]bool, bool) {
		if a, ok := anchors[f]; ok {
			return a, true
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, false
		}
		a := map[string]bool{}
		for _, id := range markdown.Anchors(string(b)) {
			a[id] = true
		}
		anchors[f] = a
		return a, true
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, l := range links(string(b)) {
			target, anchor, ok := relative(f, l)
			if !ok {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
				if _, later := pending[target]; !later {
					problems = append(problems, f+": link "+l+": "+target+" does not exist")
				}
				continue
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				problems = append(problems, f+": link "+l+": an anchor into "+target+", which is not a markdown page")
				continue
			}
			if a, _ := anchorsOf(target); !a[anchor] {
				problems = append(problems, f+": link "+l+": "+target+" has no heading #"+anchor)
			}
		}
	}
	return problems
}

// relative resolves link l of page from to a slash path relative to the
// repository and an anchor; ok is false for a link that leaves the
// repository's files (a URL, mailto:).
func relative(from, l string) (target, anchor string, ok bool) {
	if strings.Contains(strings.SplitN(l, "#", 2)[0], ":") {
		return "", "", false
	}
	p, anchor, _ := strings.Cut(l, "#")
	if p == "" {
		return from, anchor, true
	}
	return path.Clean(path.Join(path.Dir(from), p)), anchor, true
}

// links are the targets of a page's inline links and images, outside code
// spans and fenced code blocks, in order.
func links(page string) []string {
	var out []string
	fence := false
	for _, line := range strings.Split(page, "\n") {
		if t := strings.TrimLeft(line, " "); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
			continue
		}
		if !fence {
			out = append(out, lineLinks(line)...)
		}
	}
	return out
}

// lineLinks scans one line: a backslash escapes the next character, code
// spans are skipped, and [text](target) yields target.
func lineLinks(line string) []string {
	var out []string
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '`':
			n := len(line[i:]) - len(strings.TrimLeft(line[i:], "`"))
			end := strings.Index(line[i+n:], line[i:i+n])
			if end < 0 {
				i += n - 1
				continue
			}
			i += n + end + n - 1
		case ']':
			if !strings.HasPrefix(line[i:], "](") {
				continue
			}
			end := strings.IndexByte(line[i+2:], ')')
			if end < 0 {
				continue
			}
			target, _, _ := strings.Cut(line[i+2:i+2+end], " ")
			out = append(out, target)
			i += 2 + end
		}
	}
	return out
}

func TestLinks(t *testing.T) {
	cases := map[string]struct {
		page string
		want []string
	}{
		"inline links and images": {
			page: "see [a](a.md), ![b](img/b.png) and [c `d`](c.md#e \"title\")",
			want: []string{"a.md", "img/b.png", "c.md#e"},
		},
		"code is not a link": {
			page: "`[x](no.md)` and ``[y](no.md)``\n```\n[z](no.md)\n```\n[w](yes.md)",
			want: []string{"yes.md"},
		},
		"escaped brackets are text": {
			page: `containers\[engine\](not a link) but [ok](ok.md)`,
			want: []string{"ok.md"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, links(tc.page)); diff != "" {
				t.Errorf("links (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheck runs the check on a small tree, to show it finds each kind of
// broken link and accepts what resolves.
func TestCheck(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Top\n\n[ok](docs/a.md#a-heading), [dup](docs/a.md#twice-1), [here](#top), [web](https://example.org/x#y), "+
		"[gone](docs/gone.md), [bad anchor](docs/a.md#nope), [later](docs/later.md#whatever), [dir](docs)\n")
	write("docs/a.md", "# A heading\n\n## Twice\n\n## Twice\n\n```\n# not a heading\n```\n[back](../README.md#top), [code](#not-a-heading), [file](../x.txt#y)\n")
	write("x.txt", "")
	got := check(root, []string{"README.md", "docs/a.md"}, map[string]string{"docs/later.md": "elsewhere"})
	want := []string{
		"README.md: link docs/gone.md: docs/gone.md does not exist",
		"README.md: link docs/a.md#nope: docs/a.md has no heading #nope",
		"docs/a.md: link #not-a-heading: docs/a.md has no heading #not-a-heading",
		"docs/a.md: link ../x.txt#y: an anchor into x.txt, which is not a markdown page",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("check (-want +got):\n%s", diff)
	}
}
