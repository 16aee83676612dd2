package roster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestSecretNeverPrinted(t *testing.T) {
	tg := Target{ID: "web1", Host: "h", Port: 22, User: "root", Passwd: "hunter2", PrivPasswd: "s3cret"}
	var logBuf bytes.Buffer
	slog.New(slog.NewTextHandler(&logBuf, nil)).Info("t", "target", tg, "passwd", tg.Passwd)
	slog.New(slog.NewJSONHandler(&logBuf, nil)).Info("t", "target", tg, "passwd", tg.Passwd)
	js, err := json.Marshal(tg)
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{
		"%v":      fmt.Sprintf("%v", tg),
		"%+v":     fmt.Sprintf("%+v", tg),
		"%#v":     fmt.Sprintf("%#v", tg),
		"%s":      fmt.Sprintf("%s", tg.Passwd),
		"%q":      fmt.Sprintf("%q", tg.Passwd),
		"%x":      fmt.Sprintf("%x", tg.Passwd),
		"%d":      fmt.Sprintf("%d", tg.Passwd),
		"Sprint":  fmt.Sprint(tg.Passwd, tg),
		"String":  tg.String(),
		"slog":    logBuf.String(),
		"json":    string(js),
		"ptr %+v": fmt.Sprintf("%+v", &tg),
		"options": fmt.Sprintf("%+v", Options{Passwd: "hunter2"}),
	}
	for name, s := range outs {
		if strings.Contains(s, "hunter2") || strings.Contains(s, "s3cret") || strings.Contains(s, "68756e74657232") {
			t.Errorf("%s leaks a secret: %s", name, s)
		}
	}
	for _, k := range []string{"%#v", "options", "json"} {
		if !strings.Contains(outs[k], Redacted) {
			t.Errorf("%s = %s, want %s in it", k, outs[k], Redacted)
		}
	}
	if tg.Passwd.Reveal() != "hunter2" {
		t.Errorf("Reveal = %q", tg.Passwd.Reveal())
	}
	if got := fmt.Sprint(Secret("")); got != "" {
		t.Errorf("empty secret prints %q, want empty", got)
	}
	if got, want := tg.String(), "web1 (root@h:22)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestDefaultThinDir(t *testing.T) {
	// python3 -c "import uuid; print(uuid.uuid3(uuid.NAMESPACE_DNS,'master.example.com').hex[:6])"
	if got, want := DefaultThinDir("deploy", "master.example.com"), "/var/tmp/.deploy_bf67bf_salt"; got != want {
		t.Errorf("DefaultThinDir = %q, want %q", got, want)
	}
}
