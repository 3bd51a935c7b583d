package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Set is the linters a configuration can run.
type Set struct {
	// Packages are the registry's linter packages named by the
	// configuration: every linter it enables or disables (golangci-lint
	// refuses a name it does not know, either way) and every formatter.
	Packages map[string]bool
	// Standard keeps the linters golangci-lint's "standard" group holds,
	// the ones linters.default: standard enables.
	Standard bool
}

// config is what lintset reads of a golangci-lint v2 configuration.
type config struct {
	Linters struct {
		Default string   `json:"default"`
		Enable  []string `json:"enable"`
		Disable []string `json:"disable"`
	} `json:"linters"`
	Formatters struct {
		Enable []string `json:"enable"`
	} `json:"formatters"`
}

// version is the suffix a new major version of a linter carries in its name
// (wsl_v5) and not in its package (wsl).
var version = regexp.MustCompile(`_v[0-9]+$`)

// Wanted reads the linters a golangci-lint configuration names.
func Wanted(data []byte) (Set, error) {
	var c config
	if err := yaml.Unmarshal(data, &c); err != nil {
		return Set{}, fmt.Errorf("cannot parse the configuration: %w", err)
	}
	s := Set{Packages: map[string]bool{}}
	switch c.Linters.Default {
	case "", "standard":
		s.Standard = true
	case "none":
	default:
		return Set{}, fmt.Errorf("linters.default: %q enables linters the configuration does not name, which a cut build cannot know; use standard or none and name the rest under linters.enable", c.Linters.Default)
	}
	for _, names := range [][]string{c.Linters.Enable, c.Linters.Disable, c.Formatters.Enable} {
		for _, n := range names {
			s.Packages[version.ReplaceAllString(n, "")] = true
		}
	}
	return s, nil
}

// builtin is the package of golangci-lint's own linters (typecheck), which
// run whatever the configuration says.
const builtin = "golinters"

// Cut returns the registry source with only the linters s names kept, its
// imports and locals trimmed to match. It fails when the source is not the
// shape it knows or lacks a linter s names, rather than build a golangci-lint
// that would refuse the configuration.
func Cut(src []byte, s Set) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "builder_linter.go", src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("cannot parse: %w", err)
	}
	build, list := registry(f)
	if list == nil {
		return nil, fmt.Errorf("no func (LinterBuilder) Build returning a []*linter.Config literal")
	}
	found := map[string]bool{}
	kept := list.Elts[:0]
	for _, e := range list.Elts {
		pkg, standard, ok := entry(e)
		if !ok {
			return nil, fmt.Errorf("%s: an entry that is not linter.NewConfig(<package>.New…(…))…", fset.Position(e.Pos()))
		}
		found[pkg] = true
		if pkg == builtin || s.Packages[pkg] || (s.Standard && standard) {
			kept = append(kept, e)
		}
	}
	var missing []string
	for p := range s.Packages {
		if !found[p] {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("the configuration names linters this golangci-lint does not have: %s", strings.Join(missing, ", "))
	}
	list.Elts = kept
	// The comments inside the list belonged to entries that may be gone.
	var comments []*ast.CommentGroup
	for _, c := range f.Comments {
		if c.Pos() < list.Lbrace || c.End() > list.Rbrace {
			comments = append(comments, c)
		}
	}
	f.Comments = comments
	discardUnusedLocals(build.Body)
	dropUnusedImports(f)
	var out bytes.Buffer
	if err := format.Node(&out, fset, f); err != nil {
		return nil, fmt.Errorf("cannot print: %w", err)
	}
	return out.Bytes(), nil
}

// registry finds Build and the list literal it returns.
func registry(f *ast.File) (*ast.FuncDecl, *ast.CompositeLit) {
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "Build" || fn.Recv == nil || fn.Body == nil {
			continue
		}
		for _, st := range fn.Body.List {
			ret, ok := st.(*ast.ReturnStmt)
			if !ok || len(ret.Results) == 0 {
				continue
			}
			if lit, ok := ret.Results[0].(*ast.CompositeLit); ok {
				return fn, lit
			}
		}
	}
	return nil, nil
}

// entry reads one registry entry, linter.NewConfig(pkg.New(…)).With…(…)…:
// the linter's package and whether the chain puts it in the standard group.
func entry(e ast.Expr) (pkg string, standard, ok bool) {
	for {
		call, isCall := e.(*ast.CallExpr)
		if !isCall {
			return "", false, false
		}
		sel, isSel := call.Fun.(*ast.SelectorExpr)
		if !isSel {
			return "", false, false
		}
		if x, isIdent := sel.X.(*ast.Ident); isIdent && x.Name == "linter" && sel.Sel.Name == "NewConfig" {
			if len(call.Args) != 1 {
				return "", false, false
			}
			ctor, isCall := call.Args[0].(*ast.CallExpr)
			if !isCall {
				return "", false, false
			}
			csel, isSel := ctor.Fun.(*ast.SelectorExpr)
			if !isSel {
				return "", false, false
			}
			p, isIdent := csel.X.(*ast.Ident)
			if !isIdent {
				return "", false, false
			}
			return p.Name, standard, true
		}
		if sel.Sel.Name == "WithGroups" {
			for _, a := range call.Args {
				if g, isSel := a.(*ast.SelectorExpr); isSel && g.Sel.Name == "GroupStandard" {
					standard = true
				}
			}
		}
		e = sel.X
	}
}

// discardUnusedLocals turns `x := f()` into `_ = f()` where the cut left x
// unused (the placeholder replacer only some linters take), which Go would
// otherwise refuse to compile.
func discardUnusedLocals(body *ast.BlockStmt) {
	uses := map[string]int{}
	ast.Inspect(body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			uses[id.Name]++
		}
		return true
	})
	for _, st := range body.List {
		as, ok := st.(*ast.AssignStmt)
		if !ok || as.Tok != token.DEFINE || len(as.Lhs) != 1 {
			continue
		}
		if id, ok := as.Lhs[0].(*ast.Ident); ok && uses[id.Name] == 1 {
			id.Name = "_"
			as.Tok = token.ASSIGN
		}
	}
}

// dropUnusedImports removes the imports of linter packages no entry uses.
func dropUnusedImports(f *ast.File) {
	used := map[string]bool{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			continue
		}
		ast.Inspect(d, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					used[id.Name] = true
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		specs := g.Specs[:0]
		for _, sp := range g.Specs {
			is, ok := sp.(*ast.ImportSpec)
			if !ok {
				specs = append(specs, sp)
				continue
			}
			path, err := strconv.Unquote(is.Path.Value)
			name := path[strings.LastIndex(path, "/")+1:]
			if is.Name != nil {
				name = is.Name.Name
			}
			if err == nil && strings.Contains(path, "/pkg/golinters/") && !used[name] {
				continue
			}
			specs = append(specs, sp)
		}
		g.Specs = specs
	}
	f.Imports = nil
}
