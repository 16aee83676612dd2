package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// optionReceivers are the names an options map goes by where the code
// looks options up by name (cfg.Raw, env.Opts, opts, raw).
var optionReceivers = map[string]bool{"Raw": true, "raw": true, "opts": true, "Opts": true, "cfg": true, "popts": true}

// optionHelpers are functions that take an option's name and read it
// from an options map.
var optionHelpers = map[string]bool{"optBool": true, "optString": true, "optStr": true, "roots": true}

// optionTableVars are package-level tables whose entries start with an
// option name the package then reads (master/masteropts.go).
var optionTableVars = map[string]bool{"masterOptDefaults": true}

// scanOptionReads returns, for every option name the module's non-test
// code looks up by name, the package directories that do.
func scanOptionReads(t *testing.T) map[string]map[string]bool {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]map[string]bool{}
	add := func(dir, key string) {
		if found[key] == nil {
			found[key] = map[string]bool{}
		}
		found[key][dir] = true
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		ast.Inspect(f, func(n ast.Node) bool {
			for _, k := range optionKeysIn(n) {
				add(filepath.ToSlash(dir), k)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// optionKeysIn returns the option names node n reads by name.
func optionKeysIn(n ast.Node) []string {
	switch x := n.(type) {
	case *ast.CallExpr:
		return callKeys(x)
	case *ast.ValueSpec:
		var keys []string
		for i, name := range x.Names {
			if !optionTableVars[name.Name] || i >= len(x.Values) {
				continue
			}
			if lit, ok := x.Values[i].(*ast.CompositeLit); ok {
				for _, e := range lit.Elts {
					if el, ok := e.(*ast.CompositeLit); ok && len(el.Elts) > 0 {
						keys = append(keys, stringLit(el.Elts[0])...)
					}
				}
			}
		}
		return keys
	}
	return nil
}

func callKeys(c *ast.CallExpr) []string {
	switch fn := c.Fun.(type) {
	case *ast.SelectorExpr:
		if (fn.Sel.Name == "Get" || fn.Sel.Name == "Value" || fn.Sel.Name == "Has") && len(c.Args) == 1 && optionReceivers[lastName(fn.X)] {
			return stringLit(c.Args[0])
		}
		if optionHelpers[fn.Sel.Name] {
			return firstStringLit(c.Args)
		}
	case *ast.Ident:
		if optionHelpers[fn.Name] && len(c.Args) > 1 && optionReceivers[lastName(c.Args[0])] {
			return stringLit(c.Args[1])
		}
	}
	// Run(ctx, "config.option", []any{"name"}, …)
	for i, a := range c.Args {
		if s := stringLit(a); len(s) == 1 && (s[0] == "config.option" || s[0] == "config.get" || s[0] == "config.merge") && i+1 < len(c.Args) {
			if lit, ok := c.Args[i+1].(*ast.CompositeLit); ok && len(lit.Elts) > 0 {
				return stringLit(lit.Elts[0])
			}
		}
	}
	return nil
}

func lastName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

func stringLit(e ast.Expr) []string {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return nil
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return nil
	}
	return []string{s}
}

func firstStringLit(args []ast.Expr) []string {
	for _, a := range args {
		if s := stringLit(a); s != nil {
			return s
		}
	}
	return nil
}

// readsMinionConfig reports whether code in dir runs with the minion's
// config as its options (salt-minion, salt-call, the state layer they
// share); everything else runs with the master's, the state layer
// included under salt-ssh.
func readsMinionConfig(dir string) bool {
	return dir == "minion" || dir == "cmd/salt-minion" || dir == "cmd/salt-call" || isShared(dir)
}

func readsMasterConfig(dir string) bool {
	return !(dir == "minion" || dir == "cmd/salt-minion" || dir == "cmd/salt-call")
}

func isShared(dir string) bool {
	return dir == "state" || strings.HasPrefix(dir, "state/") || dir == "output" || dir == "internal/config"
}

// Every option the code reads by name must be in the table of the config
// it reads it from, or the warning would call a used option unused.
func TestEveryOptionReadIsInTheTable(t *testing.T) {
	found := scanOptionReads(t)
	if len(found) < 20 {
		t.Fatalf("the scan found only %d option reads; is it still looking at the right code?", len(found))
	}
	master, minion := keySet(masterOptions), keySet(minionOptions)
	var missing []string
	for key, dirs := range found {
		for dir := range dirs {
			if readsMasterConfig(dir) && !master[key] {
				missing = append(missing, "master: "+key+" (read in "+dir+")")
			}
			if readsMinionConfig(dir) && !minion[key] {
				missing = append(missing, "minion: "+key+" (read in "+dir+")")
			}
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Error("option read but not in the table, so warned about as unused: " + m)
	}
}

// Every option in a table must be read where its entry says: a typed
// option's field must be used in its Reader's package, any other must be
// looked up by name there, or the warning would stay silent about an
// option nothing reads.
func TestEveryTableOptionIsRead(t *testing.T) {
	found := scanOptionReads(t)
	checkTable(t, "master", masterOptions, found)
	checkTable(t, "minion", minionOptions, found)
}

func checkTable[T any](t *testing.T, name string, table []Option[T], found map[string]map[string]bool) {
	t.Helper()
	var zero T
	for _, o := range table {
		if o.Field != nil {
			field := fieldName(&zero, o.Field(&zero))
			if field == "" {
				t.Errorf("%s: option %s: Field is not a field of %T", name, o.Key, zero)
				continue
			}
			if o.Reader != "internal/config" && !usesField(t, o.Reader, field) {
				t.Errorf("%s: option %s: field %s is not used in %s", name, o.Key, field, o.Reader)
			}
			continue
		}
		if !found[o.Key][o.Reader] {
			t.Errorf("%s: option %s: %s does not read it", name, o.Key, o.Reader)
		}
	}
}

// fieldName is the name of the field of *s that ptr points at.
func fieldName[T any](s *T, ptr any) string {
	v := reflect.ValueOf(s).Elem()
	p := reflect.ValueOf(ptr).Pointer()
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).Addr().Pointer() == p && v.Field(i).Type() == reflect.TypeOf(ptr).Elem() {
			return v.Type().Field(i).Name
		}
	}
	return ""
}

// usesField reports whether non-test code in dir selects .field.
func usesField(t *testing.T, dir, field string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		used := false
		ast.Inspect(file, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == field {
				used = true
			}
			return !used
		})
		if used {
			return true
		}
	}
	return false
}

func keySet[T any](table []Option[T]) map[string]bool {
	out := map[string]bool{}
	for _, o := range table {
		out[o.Key] = true
	}
	return out
}
