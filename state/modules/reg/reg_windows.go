package reg

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func register(name, doc string, fn modules.Func, p ...modules.Param) {
	modules.Register(modules.Function{Name: "reg." + name, Doc: doc, Spec: modules.Spec{Params: p}, Fn: fn})
}

func init() {
	bits := opt("use_32bit_registry", false)
	register("read_value", "Read vname (the key's default value when None) from hive\\key: {hive, key, vname, vdata, vtype, success}.",
		readValueFn, req("hive"), req("key"), opt("vname", nil), bits)
	register("set_value", "Set vname in hive\\key to vdata of type vtype, creating the key; True on success.",
		setValueFn, req("hive"), req("key"), opt("vname", nil), opt("vdata", nil), opt("vtype", "REG_SZ"), bits, opt("volatile", false))
	register("delete_value", "Delete vname from hive\\key: True, or None when it was not there.",
		deleteValueFn, req("hive"), req("key"), opt("vname", nil), bits)
	register("delete_key_recursive", "Delete hive\\key and every key below it: {Deleted: [...], Failed: [...]}, False when missing.",
		deleteKeyRecursiveFn, req("hive"), req("key"), bits)
	register("key_exists", "Report whether hive\\key exists.", keyExistsFn, req("hive"), req("key"), bits)
	register("value_exists", "Report whether vname exists in hive\\key.", valueExistsFn, req("hive"), req("key"), req("vname"), bits)
	register("list_keys", "List the subkeys of hive\\key.", listKeysFn, req("hive"), opt("key", nil), bits)
	register("list_values", "List the values of hive\\key with their data and types.", listValuesFn, req("hive"), opt("key", nil), bits)
}

var predefined = map[string]registry.Key{
	"HKEY_CURRENT_CONFIG": registry.CURRENT_CONFIG, "HKEY_CLASSES_ROOT": registry.CLASSES_ROOT,
	"HKEY_CURRENT_USER": registry.CURRENT_USER, "HKEY_LOCAL_MACHINE": registry.LOCAL_MACHINE,
	"HKEY_USERS": registry.USERS,
}

func hiveKey(hive string) (registry.Key, error) {
	h, err := CheckHive(hive)
	if err != nil {
		return 0, err
	}
	return predefined[h], nil
}

func view(c *modules.Call) uint32 {
	if c.Bool("use_32bit_registry") {
		return registry.WOW64_32KEY
	}
	return 0
}

// ReadValue is win_reg.read_value.
func ReadValue(hive, key string, vname *string, wow uint32) (*ordered.Map, error) {
	name := ""
	if vname != nil {
		name = *vname
	}
	ret := readResult(hive, key, name, vname != nil && *vname != "")
	root, err := hiveKey(hive)
	if err != nil {
		return nil, err
	}
	k, err := registry.OpenKey(root, key, registry.READ|wow)
	if err != nil {
		return keyError(ret, hive, key, err)
	}
	defer k.Close()
	data, vtype, err := getValue(k, name)
	switch {
	case errors.Is(err, syscall.ERROR_FILE_NOT_FOUND) && vname == nil:
		ret.Set("vdata", "(value not set)")
		ret.Set("vtype", "REG_SZ")
	case errors.Is(err, syscall.ERROR_FILE_NOT_FOUND):
		ret.Set("comment", "Cannot find "+name+" in "+hive+`\`+key)
		ret.Set("success", false)
	case err != nil:
		return nil, modules.Errorf("%s", err.Error())
	case isEmpty(data):
		ret.Set("comment", "Empty Value")
	default:
		ret.Set("vtype", VtypeName(vtype))
		ret.Set("vdata", data)
	}
	return ret, nil
}

// isEmpty is Python's "not vdata" for values other than 0, "" and [].
func isEmpty(v any) bool { return v == nil }

func keyError(ret *ordered.Map, hive, key string, err error) (*ordered.Map, error) {
	switch {
	case errors.Is(err, syscall.ERROR_FILE_NOT_FOUND):
		ret.Set("comment", "Cannot find key: "+hive+`\`+key)
	case errors.Is(err, syscall.ERROR_ACCESS_DENIED):
		ret.Set("comment", "Access is denied: "+hive+`\`+key)
	default:
		return nil, modules.Errorf("%s", err.Error())
	}
	ret.Set("success", false)
	return ret, nil
}

// getValue reads one value as pywin32's RegQueryValueEx returns it.
func getValue(k registry.Key, name string) (any, uint32, error) {
	_, vtype, err := k.GetValue(name, nil)
	if err != nil {
		return nil, 0, err
	}
	switch vtype {
	case RegSz, RegExpandSz:
		s, _, err := k.GetStringValue(name)
		return s, vtype, err
	case RegMultiSz:
		l, _, err := k.GetStringsValue(name)
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out, vtype, err
	case RegDword, RegQword:
		n, _, err := k.GetIntegerValue(name)
		return int(n), vtype, err
	}
	b, _, err := k.GetBinaryValue(name)
	if len(b) == 0 {
		return nil, vtype, err
	}
	return string(b), vtype, err
}

func readValueFn(_ context.Context, c *modules.Call) (any, error) {
	var vname *string
	if c.Arg("vname") != nil {
		s := c.Str("vname")
		vname = &s
	}
	return ReadValue(c.Str("hive"), c.Str("key"), vname, view(c))
}

// SetValue is win_reg.set_value: false when the key cannot be created
// or the data does not fit the type.
func SetValue(hive, key, vname string, vdata any, vtype string, wow uint32, volatile bool) (bool, error) {
	root, err := hiveKey(hive)
	if err != nil {
		return false, err
	}
	t, err := Vtype(vtype)
	if err != nil {
		return false, err
	}
	data, err := CastVdata(vdata, vtype)
	if err != nil {
		return false, nil
	}
	k, err := createKey(root, key, registry.ALL_ACCESS|wow, volatile)
	if err != nil {
		return false, nil
	}
	defer k.Close()
	if err := setValue(k, vname, t, data); err != nil {
		return false, nil
	}
	broadcastChange()
	return true, nil
}

func setValue(k registry.Key, name string, t uint32, data any) error {
	switch t {
	case RegSz:
		s, _ := data.(string)
		return k.SetStringValue(name, s)
	case RegExpandSz:
		s, _ := data.(string)
		return k.SetExpandStringValue(name, s)
	case RegMultiSz:
		l, _ := data.([]any)
		ss := make([]string, len(l))
		for i, x := range l {
			ss[i], _ = x.(string)
		}
		return k.SetStringsValue(name, ss)
	case RegBinary:
		s, _ := data.(string)
		return k.SetBinaryValue(name, []byte(s))
	case RegDword:
		n, _ := data.(int)
		return k.SetDWordValue(name, uint32(n))
	case RegQword:
		n, _ := data.(int)
		return k.SetQWordValue(name, uint64(n))
	}
	return k.SetBinaryValue(name, nil)
}

var procRegCreateKeyExW = windows.NewLazySystemDLL("advapi32.dll").NewProc("RegCreateKeyExW")

// createKey is RegCreateKeyEx with REG_OPTION_VOLATILE when asked (the
// registry package's CreateKey creates non-volatile keys only).
func createKey(root registry.Key, path string, access uint32, volatile bool) (registry.Key, error) {
	if !volatile {
		k, _, err := registry.CreateKey(root, path, access)
		return k, err
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, err
	}
	var h windows.Handle
	var disp uint32
	const regOptionVolatile = 1
	r, _, _ := procRegCreateKeyExW.Call(uintptr(root), uintptr(unsafe.Pointer(p)), 0, 0, regOptionVolatile,
		uintptr(access), 0, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&disp)))
	if r != 0 {
		return 0, syscall.Errno(r)
	}
	return registry.Key(h), nil
}

var procSendMessageTimeoutW = windows.NewLazySystemDLL("user32.dll").NewProc("SendMessageTimeoutW")

// broadcastChange is win_reg.broadcast_change: WM_SETTINGCHANGE to every
// top-level window, so running programs re-read the environment.
func broadcastChange() {
	if procSendMessageTimeoutW.Find() != nil {
		return
	}
	env, _ := windows.UTF16PtrFromString("Environment")
	const hwndBroadcast, wmSettingChange, smtoAbortIfHung = 0xffff, 0x1a, 2
	var res uintptr
	procSendMessageTimeoutW.Call(hwndBroadcast, wmSettingChange, 0, uintptr(unsafe.Pointer(env)),
		smtoAbortIfHung, 5000, uintptr(unsafe.Pointer(&res)))
}

func setValueFn(_ context.Context, c *modules.Call) (any, error) {
	return SetValue(c.Str("hive"), c.Str("key"), c.Str("vname"), c.Arg("vdata"), c.Str("vtype"), view(c), c.Bool("volatile"))
}

// DeleteValue is win_reg.delete_value: true, nil when the value (or key)
// does not exist.
func DeleteValue(hive, key, vname string, wow uint32) (any, error) {
	root, err := hiveKey(hive)
	if err != nil {
		return nil, err
	}
	k, err := registry.OpenKey(root, key, registry.ALL_ACCESS|wow)
	if err == nil {
		defer k.Close()
		err = k.DeleteValue(vname)
	}
	switch {
	case err == nil:
		broadcastChange()
		return true, nil
	case errors.Is(err, syscall.ERROR_FILE_NOT_FOUND):
		return nil, nil
	}
	return nil, modules.Errorf("%s", err.Error())
}

func deleteValueFn(_ context.Context, c *modules.Call) (any, error) {
	return DeleteValue(c.Str("hive"), c.Str("key"), c.Str("vname"), view(c))
}

// KeyExists is win_reg.key_exists.
func KeyExists(hive, key string, wow uint32) (bool, error) {
	root, err := hiveKey(hive)
	if err != nil {
		return false, err
	}
	k, err := registry.OpenKey(root, key, registry.READ|wow)
	if errors.Is(err, syscall.ERROR_FILE_NOT_FOUND) {
		return false, nil
	}
	if err != nil {
		return false, modules.Errorf("%s", err.Error())
	}
	k.Close()
	return true, nil
}

func keyExistsFn(_ context.Context, c *modules.Call) (any, error) {
	return KeyExists(c.Str("hive"), c.Str("key"), view(c))
}

func valueExistsFn(_ context.Context, c *modules.Call) (any, error) {
	root, err := hiveKey(c.Str("hive"))
	if err != nil {
		return nil, err
	}
	k, err := registry.OpenKey(root, c.Str("key"), registry.READ|view(c))
	if errors.Is(err, syscall.ERROR_FILE_NOT_FOUND) {
		return false, nil
	}
	if err != nil {
		return nil, modules.Errorf("%s", err.Error())
	}
	defer k.Close()
	_, _, err = k.GetValue(c.Str("vname"), nil)
	if errors.Is(err, syscall.ERROR_FILE_NOT_FOUND) {
		return false, nil
	}
	return err == nil, nil
}

// openForList opens hive\key for list_keys and list_values, which return
// (False, message) for a missing or forbidden key.
func openForList(c *modules.Call) (registry.Key, []any, error) {
	hive, key := c.Str("hive"), c.Str("key")
	root, err := hiveKey(hive)
	if err != nil {
		return 0, nil, err
	}
	k, err := registry.OpenKey(root, key, registry.READ|view(c))
	switch {
	case errors.Is(err, syscall.ERROR_FILE_NOT_FOUND):
		return 0, []any{false, "Cannot find key: " + hive + `\` + key}, nil
	case errors.Is(err, syscall.ERROR_ACCESS_DENIED):
		return 0, []any{false, "Access is denied: " + hive + `\` + key}, nil
	case err != nil:
		return 0, nil, modules.Errorf("%s", err.Error())
	}
	return k, nil, nil
}

func listKeysFn(_ context.Context, c *modules.Call) (any, error) {
	k, failed, err := openForList(c)
	if err != nil || failed != nil {
		return failed, err
	}
	defer k.Close()
	names, err := k.ReadSubKeyNames(-1)
	if err != nil {
		return nil, modules.Errorf("%s", err.Error())
	}
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out, nil
}

func listValuesFn(_ context.Context, c *modules.Call) (any, error) {
	k, failed, err := openForList(c)
	if err != nil || failed != nil {
		return failed, err
	}
	defer k.Close()
	names, err := k.ReadValueNames(-1)
	if err != nil {
		return nil, modules.Errorf("%s", err.Error())
	}
	out := []any{}
	for _, n := range names {
		data, vtype, err := getValue(k, n)
		if err != nil {
			continue
		}
		shown := n
		if shown == "" {
			shown = "(Default)"
		}
		out = append(out, ordered.FromPairs("hive", c.Str("hive"), "key", c.Str("key"), "vname", shown,
			"vtype", VtypeName(vtype), "success", true, "vdata", data))
	}
	return out, nil
}

// subkeySlashCheck is win_reg's guard against deleting a key too close
// to the hive's root: the backslashes a key needs past its first
// character.
var subkeySlashCheck = map[string]int{"HKEY_CURRENT_USER": 0, "HKEY_LOCAL_MACHINE": 1, "HKEY_USERS": 1,
	"HKEY_CURRENT_CONFIG": 1, "HKEY_CLASSES_ROOT": 1}

// DeleteKeyRecursive is win_reg.delete_key_recursive.
func DeleteKeyRecursive(hive, key string, wow uint32) (any, error) {
	root, err := hiveKey(hive)
	if err != nil {
		return nil, err
	}
	if ok, err := KeyExists(hive, key, wow); err != nil || !ok {
		return false, err
	}
	if len(key) > 1 && strings.Count(key[1:], `\`) < subkeySlashCheck[Hives[hive]] {
		return false, nil
	}
	var paths []string
	var walk func(p string)
	walk = func(p string) {
		k, err := registry.OpenKey(root, p, registry.READ|wow)
		if err != nil {
			return
		}
		names, _ := k.ReadSubKeyNames(-1)
		k.Close()
		for _, n := range names {
			sub := p + `\` + n
			walk(sub)
			paths = append(paths, sub)
		}
	}
	walk(key)
	paths = append(paths, key)
	deleted, failed := []any{}, []any{}
	for _, p := range paths {
		if err := deleteKey(root, p, wow); err != nil {
			failed = append(failed, hive+`\`+p+" "+err.Error())
			continue
		}
		deleted = append(deleted, hive+`\`+p)
	}
	broadcastChange()
	return ordered.FromPairs("Deleted", deleted, "Failed", failed), nil
}

var procRegDeleteKeyExW = windows.NewLazySystemDLL("advapi32.dll").NewProc("RegDeleteKeyExW")

// deleteKey deletes one key without subkeys in the chosen registry view.
func deleteKey(root registry.Key, path string, wow uint32) error {
	if wow == 0 {
		return registry.DeleteKey(root, path)
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	if r, _, _ := procRegDeleteKeyExW.Call(uintptr(root), uintptr(unsafe.Pointer(p)), uintptr(wow), 0); r != 0 {
		return syscall.Errno(r)
	}
	return nil
}

func deleteKeyRecursiveFn(_ context.Context, c *modules.Call) (any, error) {
	return DeleteKeyRecursive(c.Str("hive"), c.Str("key"), view(c))
}

// readResult is read_value's return dict in Salt's key order.
func readResult(hive, key, vname string, named bool) *ordered.Map {
	if !named {
		vname = "(Default)"
	}
	return ordered.FromPairs("hive", hive, "key", key, "vname", vname, "vdata", nil, "vtype", nil, "success", true)
}
