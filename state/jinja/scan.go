package jinja

import "reflect"

var (
	nameExprType  = reflect.TypeOf(&nameExpr{})
	macroNodeType = reflect.TypeOf(&macroNode{})
	macroDefType  = reflect.TypeOf(&macroDef{})

	filterExprType      = reflect.TypeOf(&filterExpr{})
	testExprType        = reflect.TypeOf(&testExpr{})
	ifNodeType          = reflect.TypeOf(&ifNode{})
	condExprType        = reflect.TypeOf(&condExpr{})
	forNodeType         = reflect.TypeOf(&forNode{})
	filterBlockNodeType = reflect.TypeOf(&filterBlockNode{})
	withNodeType        = reflect.TypeOf(&withNode{})
	setBlockNodeType    = reflect.TypeOf(&setBlockNode{})
	loadNodeType        = reflect.TypeOf(&loadNode{})
)

// scanNames sets the uses* flags of a macro from the names its body
// reads, as jinja2's compiler does with find_undeclared. Nested macro
// definitions are not searched; they have their own.
func (m *macroDef) scanNames() {
	var visit func(v reflect.Value)
	visit = func(v reflect.Value) {
		if !v.IsValid() {
			return
		}
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if v.IsNil() {
				return
			}
			switch v.Type() {
			case nameExprType:
				switch v.Elem().FieldByName("name").String() {
				case "caller":
					m.usesCaller = true
				case "varargs":
					m.usesVarargs = true
				case "kwargs":
					m.usesKwargs = true
				}
				return
			case macroNodeType, macroDefType:
				return
			}
			visit(v.Elem())
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				visit(v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				visit(v.Index(i))
			}
		}
	}
	for _, n := range m.body {
		visit(reflect.ValueOf(&n).Elem())
	}
	for _, d := range m.defaults {
		visit(reflect.ValueOf(&d).Elem())
	}
}

// checkNames fails like jinja2's compiler on a filter or test that does
// not exist, except inside an if statement or an inline if (a "soft"
// frame in jinja2/compiler.py), where the failure waits for run time.
func checkNames(body []node) error {
	var err error
	var visit func(v reflect.Value, soft bool)
	visit = func(v reflect.Value, soft bool) {
		if err != nil || !v.IsValid() {
			return
		}
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if v.IsNil() {
				return
			}
			switch v.Type() {
			case filterExprType, testExprType:
				name := v.Elem().FieldByName("name").String()
				_, isFilter := filters[name]
				_, isTest := tests[name]
				if !soft && (v.Type() == filterExprType && !isFilter || v.Type() == testExprType && !isTest) {
					kind := "filter"
					if v.Type() == testExprType {
						kind = "test"
					}
					err = syntaxErr(int(v.Elem().FieldByName("pos").FieldByName("line").Int()), "No %s named '%s'.", kind, name)
					return
				}
			case ifNodeType, condExprType:
				soft = true
			case forNodeType, macroDefType, filterBlockNodeType, withNodeType, setBlockNodeType, loadNodeType:
				soft = false
			}
			visit(v.Elem(), soft)
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				visit(v.Field(i), soft)
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				visit(v.Index(i), soft)
			}
		}
	}
	for _, n := range body {
		visit(reflect.ValueOf(&n).Elem(), false)
	}
	return err
}
