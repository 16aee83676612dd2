package jinja

import "reflect"

var (
	nameExprType  = reflect.TypeOf(&nameExpr{})
	macroNodeType = reflect.TypeOf(&macroNode{})
	macroDefType  = reflect.TypeOf(&macroDef{})
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
