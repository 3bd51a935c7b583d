package reasons_test

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// The scan's rule. A condition reason is a string constant that can reach
// the Reason field of a sink struct (composite.Condition, the one type
// every condition this function writes passes through). Starting from
// every expression stored into that field (a keyed or positional field of
// a composite literal, or an assignment), the scan follows values back to
// constants through:
//   - constant expressions (named constants, literals, concatenations);
//   - parentheses and conversions (string(x), autostop.Reason(x));
//   - variables: every value assigned to them (:=, =, var, tuples from calls);
//   - struct fields: every value stored into that field of that struct type
//     anywhere in the scanned packages;
//   - parameters: the argument at that position in every static call of the
//     function, method or closure (a func literal bound to a variable);
//   - calls: every value the callee returns at that result position.
//
// Anything else (a map or slice element, a type assertion, a call to a
// function outside the scanned packages, a range variable) is a dynamic
// source: the value comes from data the cluster holds, not from this
// code. The test lists every dynamic source it accepts, with why, so a new
// flow the scan cannot follow fails the test instead of hiding a reason.
//
// For each stored reason the scan also resolves the condition's Type the
// same way: the Type field of the same composite literal, or of the
// literals the assigned variable was built from; "*" when it cannot tell.

// sink names the struct field condition reasons are stored into.
type sink struct {
	pkg, typ, reasonField, typeField string
}

// scanned is what the scan found.
type scanned struct {
	// pairs maps each reason to the condition types it is stored with
	// ("*" for a type the scan cannot tell).
	pairs map[string]map[string]bool
	// dynamic are the sources the scan could not follow, as
	// "path/file.go: expression".
	dynamic map[string]bool
}

type store struct {
	expr  ast.Expr
	index int // result index of a tuple-valued call; -1 for a plain value
	lit   *ast.CompositeLit
	base  ast.Expr // x in x.Field = v
}

type flow struct {
	root    string
	fset    *token.FileSet
	info    *types.Info
	fields  map[string][]store // "pkg.Type.Field" -> stores into it
	vars    map[string][]store // variable key -> values assigned
	dynVars map[string]string  // variable key -> why it is dynamic (range variables)
	params  map[string]param   // parameter key -> its function and position
	calls   map[string][]*ast.CallExpr
	returns map[string][]*ast.ReturnStmt
	results map[string][]string // function key -> named result keys
	memo    map[string]map[string]bool
	dynamic map[string]bool
	// opaque are the sink's own fields: a value read from one is a copy of
	// a condition already stored, so it adds no pair of its own.
	opaque map[string]bool
	// quiet is set while types are resolved: a type the scan cannot tell
	// is "*", not a dynamic reason; memo entries are kept apart for it.
	quiet bool
}

type param struct {
	fn    string
	index int
}

// scan loads the packages matched by patterns under dir (without their
// tests) and returns the reasons that reach s.
func scan(dir string, s sink, patterns ...string) (scanned, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
			packages.NeedTypesInfo | packages.NeedImports,
		Dir:   dir,
		Tests: false,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return scanned{}, fmt.Errorf("cannot load packages: %w", err)
	}
	var loadErrs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			loadErrs = append(loadErrs, e.Error())
		}
	})
	if len(loadErrs) > 0 {
		return scanned{}, fmt.Errorf("cannot load packages: %s", strings.Join(loadErrs, "; "))
	}
	f := &flow{
		root: dir, fset: cfg.Fset,
		info: &types.Info{
			Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
			Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
		},
		fields: map[string][]store{}, vars: map[string][]store{}, dynVars: map[string]string{},
		params: map[string]param{}, calls: map[string][]*ast.CallExpr{}, returns: map[string][]*ast.ReturnStmt{},
		results: map[string][]string{}, memo: map[string]map[string]bool{}, dynamic: map[string]bool{},
		opaque: map[string]bool{s.pkg + "." + s.typ + "." + s.reasonField: true, s.pkg + "." + s.typ + "." + s.typeField: true},
	}
	if len(pkgs) > 0 {
		f.fset = pkgs[0].Fset
	}
	for _, p := range pkgs {
		mergeInfo(f.info, p.TypesInfo)
	}
	for _, p := range pkgs {
		for _, file := range p.Syntax {
			f.index(file)
		}
	}
	out := scanned{pairs: map[string]map[string]bool{}, dynamic: f.dynamic}
	for _, st := range f.fields[s.pkg+"."+s.typ+"."+s.reasonField] {
		typs := f.typesOf(st, s)
		for r := range f.resolveStore(st) {
			if out.pairs[r] == nil {
				out.pairs[r] = map[string]bool{}
			}
			for t := range typs {
				out.pairs[r][t] = true
			}
		}
	}
	return out, nil
}

func mergeInfo(dst, src *types.Info) {
	if src == nil {
		return
	}
	for k, v := range src.Types {
		dst.Types[k] = v
	}
	for k, v := range src.Defs {
		dst.Defs[k] = v
	}
	for k, v := range src.Uses {
		dst.Uses[k] = v
	}
	for k, v := range src.Selections {
		dst.Selections[k] = v
	}
}

// key names an object by where it is declared, so the same object seen
// from two packages is one key.
func (f *flow) key(o types.Object) string {
	return fmt.Sprintf("%s@%s", o.Name(), f.fset.Position(o.Pos()))
}

// fieldKey is "pkg.Type.Field" for a field of the named struct t.
func fieldKey(t types.Type, field string) (string, *types.Struct) {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return "", nil
	}
	st, ok := n.Underlying().(*types.Struct)
	if !ok {
		return "", nil
	}
	pkg := ""
	if n.Obj().Pkg() != nil {
		pkg = n.Obj().Pkg().Path()
	}
	return pkg + "." + n.Obj().Name() + "." + field, st
}

func (f *flow) where(n ast.Node) string {
	p := f.fset.Position(n.Pos())
	rel, err := filepath.Rel(f.root, p.Filename)
	if err != nil {
		rel = p.Filename
	}
	return filepath.ToSlash(rel)
}

// index records every store, call, parameter and return of a file.
func (f *flow) index(file *ast.File) {
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if o := f.info.Defs[n.Name]; o != nil {
				f.function(f.key(o), n.Type, n.Body)
			}
		case *ast.AssignStmt:
			f.assign(n.Lhs, n.Rhs)
		case *ast.ValueSpec:
			lhs := make([]ast.Expr, len(n.Names))
			for i, id := range n.Names {
				lhs[i] = id
			}
			f.assign(lhs, n.Values)
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if k := f.varKey(e); k != "" {
					f.dynVars[k] = "range over " + f.where(n)
				}
			}
		case *ast.CompositeLit:
			f.literal(n)
		case *ast.CallExpr:
			if k := f.callee(n.Fun); k != "" {
				f.calls[k] = append(f.calls[k], n)
			}
		}
		return true
	})
}

// function records a function's parameters, named results and returns.
func (f *flow) function(fn string, typ *ast.FuncType, body *ast.BlockStmt) {
	i := 0
	for _, fld := range typ.Params.List {
		if len(fld.Names) == 0 {
			i++
		}
		for _, id := range fld.Names {
			if o := f.info.Defs[id]; o != nil {
				f.params[f.key(o)] = param{fn: fn, index: i}
			}
			i++
		}
	}
	if typ.Results != nil {
		for _, fld := range typ.Results.List {
			for _, id := range fld.Names {
				if o := f.info.Defs[id]; o != nil {
					f.results[fn] = append(f.results[fn], f.key(o))
				}
			}
		}
	}
	if body == nil {
		return
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // its returns are its own
		case *ast.ReturnStmt:
			f.returns[fn] = append(f.returns[fn], n)
		}
		return true
	})
}

func (f *flow) assign(lhs, rhs []ast.Expr) {
	for i, l := range lhs {
		var st store
		switch {
		case len(rhs) == len(lhs):
			st = store{expr: rhs[i], index: -1}
			if fl, ok := ast.Unparen(rhs[i]).(*ast.FuncLit); ok {
				if k := f.varKey(l); k != "" {
					f.function(k, fl.Type, fl.Body)
				}
			}
		case len(rhs) == 1:
			st = store{expr: rhs[0], index: i}
		default:
			continue
		}
		if k := f.varKey(l); k != "" {
			f.vars[k] = append(f.vars[k], st)
			continue
		}
		if sel, ok := ast.Unparen(l).(*ast.SelectorExpr); ok {
			if s := f.info.Selections[sel]; s != nil && s.Kind() == types.FieldVal {
				if k, _ := fieldKey(s.Recv(), sel.Sel.Name); k != "" {
					st.base = sel.X
					f.fields[k] = append(f.fields[k], st)
				} else if k := f.embeddedFieldKey(s, sel.Sel.Name); k != "" {
					st.base = sel.X
					f.fields[k] = append(f.fields[k], st)
				}
			}
		}
	}
}

// embeddedFieldKey keys a field reached through an embedded struct by the
// struct that declares it.
func (f *flow) embeddedFieldKey(s *types.Selection, name string) string {
	t := s.Recv()
	idx := s.Index()
	for _, i := range idx[:len(idx)-1] {
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		st, ok := t.Underlying().(*types.Struct)
		if !ok {
			return ""
		}
		t = st.Field(i).Type()
	}
	k, _ := fieldKey(t, name)
	return k
}

// varKey is the key of a variable (not a field) named by e; "" otherwise.
func (f *flow) varKey(e ast.Expr) string {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok || id.Name == "_" {
		if sel, ok := ast.Unparen(e).(*ast.SelectorExpr); ok && f.info.Selections[sel] == nil {
			id = sel.Sel // a package-qualified variable
		} else {
			return ""
		}
	}
	o := f.info.Defs[id]
	if o == nil {
		o = f.info.Uses[id]
	}
	if v, ok := o.(*types.Var); ok && !v.IsField() {
		return f.key(v)
	}
	return ""
}

func (f *flow) literal(lit *ast.CompositeLit) {
	tv, ok := f.info.Types[lit]
	if !ok {
		return
	}
	_, st := fieldKey(tv.Type, "")
	if st == nil {
		return
	}
	for i, e := range lit.Elts {
		name, val := "", e
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			id, ok := kv.Key.(*ast.Ident)
			if !ok {
				continue
			}
			name, val = id.Name, kv.Value
		} else if i < st.NumFields() {
			name = st.Field(i).Name()
		}
		if k, _ := fieldKey(tv.Type, name); name != "" && k != "" {
			f.fields[k] = append(f.fields[k], store{expr: val, index: -1, lit: lit})
		}
	}
}

// callee keys the function a call expression calls statically: a declared
// function or method, or a variable holding a func literal.
func (f *flow) callee(fun ast.Expr) string {
	var id *ast.Ident
	switch fn := ast.Unparen(fun).(type) {
	case *ast.Ident:
		id = fn
	case *ast.SelectorExpr:
		if s := f.info.Selections[fn]; s != nil {
			if s.Kind() == types.MethodVal {
				return f.key(s.Obj())
			}
			return ""
		}
		id = fn.Sel
	default:
		return ""
	}
	switch o := f.info.Uses[id].(type) {
	case *types.Func:
		return f.key(o)
	case *types.Var:
		if !o.IsField() {
			return f.key(o)
		}
	}
	return ""
}

// resolveStore is the set of constants a store can hold.
func (f *flow) resolveStore(st store) map[string]bool {
	if st.index < 0 {
		return f.resolve(st.expr)
	}
	call, ok := ast.Unparen(st.expr).(*ast.CallExpr)
	if !ok {
		f.note(st.expr, types.ExprString(st.expr))
		return nil
	}
	return f.returned(call, st.index)
}

// resolve follows e back to the constants it can hold.
func (f *flow) resolve(e ast.Expr) map[string]bool {
	if tv, ok := f.info.Types[e]; ok && tv.Value != nil {
		if tv.Value.Kind() == constant.String {
			return map[string]bool{constant.StringVal(tv.Value): true}
		}
		return nil
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return f.resolve(x.X)
	case *ast.CallExpr:
		if tv, ok := f.info.Types[x.Fun]; ok && tv.IsType() && len(x.Args) == 1 {
			return f.resolve(x.Args[0])
		}
		return f.returned(x, 0)
	case *ast.Ident:
		return f.object(x, f.info.Uses[x])
	case *ast.SelectorExpr:
		if s := f.info.Selections[x]; s != nil {
			if s.Kind() != types.FieldVal {
				break
			}
			k, _ := fieldKey(s.Recv(), x.Sel.Name)
			if k == "" {
				k = f.embeddedFieldKey(s, x.Sel.Name)
			}
			if k == "" {
				break
			}
			if f.opaque[k] {
				return nil
			}
			return f.memoized("field "+k, func() map[string]bool {
				out := map[string]bool{}
				for _, st := range f.fields[k] {
					union(out, f.resolveStore(st))
				}
				return out
			})
		}
		return f.object(x.Sel, f.info.Uses[x.Sel])
	}
	f.note(e, types.ExprString(e))
	return nil
}

// object resolves a variable or parameter.
func (f *flow) object(id *ast.Ident, o types.Object) map[string]bool {
	v, ok := o.(*types.Var)
	if !ok {
		f.note(id, id.Name)
		return nil
	}
	k := f.key(v)
	return f.memoized("var "+k, func() map[string]bool {
		out := map[string]bool{}
		if why, ok := f.dynVars[k]; ok {
			f.note(id, id.Name+" ("+why+")")
		}
		if p, ok := f.params[k]; ok {
			calls := f.calls[p.fn]
			if len(calls) == 0 {
				f.note(id, id.Name+" (a parameter of a function never called statically)")
			}
			for _, c := range calls {
				if p.index < len(c.Args) {
					union(out, f.resolve(c.Args[p.index]))
				}
			}
		}
		for _, st := range f.vars[k] {
			union(out, f.resolveStore(st))
		}
		return out
	})
}

// returned is what the function call calls returns at result index i.
func (f *flow) returned(call *ast.CallExpr, i int) map[string]bool {
	fn := f.callee(call.Fun)
	if fn == "" || (len(f.returns[fn]) == 0 && len(f.results[fn]) == 0) {
		f.note(call, types.ExprString(call))
		return nil
	}
	return f.memoized(fmt.Sprintf("return %s %d", fn, i), func() map[string]bool {
		out := map[string]bool{}
		for _, r := range f.returns[fn] {
			switch {
			case len(r.Results) == 0 && i < len(f.results[fn]):
				for _, st := range f.vars[f.results[fn][i]] {
					union(out, f.resolveStore(st))
				}
			case len(r.Results) == 1 && i > 0:
				if c, ok := ast.Unparen(r.Results[0]).(*ast.CallExpr); ok {
					union(out, f.returned(c, i))
				}
			case i < len(r.Results):
				union(out, f.resolve(r.Results[i]))
			}
		}
		return out
	})
}

// note records a dynamic source of a reason.
func (f *flow) note(n ast.Node, what string) {
	if !f.quiet {
		f.dynamic[f.where(n)+": "+what] = true
	}
}

// memoized computes a key's constants once; a key met again while it is
// being computed (a cycle) adds nothing new.
func (f *flow) memoized(k string, compute func() map[string]bool) map[string]bool {
	if f.quiet {
		k = "type " + k
	}
	if v, ok := f.memo[k]; ok {
		return v
	}
	f.memo[k] = nil
	v := compute()
	f.memo[k] = v
	return v
}

// typesOf is the set of condition types a reason store goes with.
func (f *flow) typesOf(st store, s sink) map[string]bool {
	wild := map[string]bool{"*": true}
	lits := []*ast.CompositeLit{st.lit}
	if st.lit == nil {
		k := f.varKey(st.base)
		if k == "" {
			return wild
		}
		lits = nil
		for _, v := range f.vars[k] {
			e := ast.Unparen(v.expr)
			if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
				e = u.X
			}
			lit, ok := e.(*ast.CompositeLit)
			if !ok || v.index >= 0 {
				return wild
			}
			lits = append(lits, lit)
		}
	}
	f.quiet = true
	defer func() { f.quiet = false }()
	out := map[string]bool{}
	for _, lit := range lits {
		v := f.fieldOf(lit, s.typeField)
		if v == nil {
			return wild
		}
		r := f.resolve(v)
		if len(r) == 0 {
			return wild
		}
		union(out, r)
	}
	if len(out) == 0 {
		return wild
	}
	return out
}

// fieldOf is the value lit gives field name, keyed or positional; nil when
// it gives none.
func (f *flow) fieldOf(lit *ast.CompositeLit, name string) ast.Expr {
	_, st := fieldKey(f.info.Types[lit].Type, "")
	for i, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok && id.Name == name {
				return kv.Value
			}
		} else if st != nil && i < st.NumFields() && st.Field(i).Name() == name {
			return e
		}
	}
	return nil
}

func union(dst, src map[string]bool) {
	for k := range src {
		dst[k] = true
	}
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
