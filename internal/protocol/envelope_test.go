package protocol

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

func keysOf(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(*ordered.Map)
	if !ok {
		t.Fatalf("%T is not a map", v)
	}
	return m.StringKeys()
}

func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestKeyOrder(t *testing.T) {
	auth := &AuthRequest{ID: "m1", Nonce: "n", EncAlgo: OAEPSHA1, SigAlgo: PKCS1v15SHA1,
		AutosignGrains: ordered.FromPairs("uuid", "x"), Token: []byte{1}, Pub: "PEM"}
	tests := []struct {
		name string
		v    any
		want []string
	}{
		{"clear request", &Request{Enc: EncClear, Load: ordered.New(), Version: 3}, []string{"enc", "load", "version"}},
		{"aes request", &Request{Enc: EncAES, Load: []byte{1}, Version: 3, ID: "m1"},
			[]string{"enc", "load", "version", "id", "enc_algo", "sig_algo"}},
		{"auth", auth, []string{"cmd", "id", "nonce", "enc_algo", "sig_algo", "autosign_grains", "token", "pub"}},
		{"auth reply", &AuthReply{PubKey: "P", PublishPort: 4505, Token: []byte{1}, AES: []byte{2}, Session: []byte{3}, Sig: []byte{4}, Nonce: "n"},
			[]string{"enc", "pub_key", "publish_port", "token", "aes", "session", "sig", "nonce"}},
		{"job", &Job{Fun: "test.ping", Tgt: "*", JID: "1", TgtType: "glob", User: "root", Delimiter: ":",
			Kwargs: ordered.FromPairs("metadata", ordered.New(), "ret_config", "x")},
			[]string{"fun", "arg", "tgt", "jid", "ret", "tgt_type", "ret_config", "metadata", "user"}},
		{"return", &Return{ID: "m1", JID: "1", Fun: "test.ping", Out: "nested"},
			[]string{"cmd", "id", "success", "return", "retcode", "jid", "fun", "fun_args", "out"}},
		{"pillar", &PillarRequest{ID: "m1", Ver: "2"},
			[]string{"id", "grains", "saltenv", "pillarenv", "pillar_override", "extra_minion_data", "ver", "cmd"}},
		{"publish", &Publish{Load: []byte{1}, SigAlgo: PKCS1v15SHA1, Sig: []byte{2}}, []string{"enc", "load", "sig_algo", "sig"}},
		{"signed clear", &SignedClear{Load: []byte{1}, Sig: []byte{2}}, []string{"enc", "load", "sig"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, keysOf(t, roundTrip(t, tc.v))); d != "" {
				t.Errorf("keys (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseLoads(t *testing.T) {
	auth := &AuthRequest{ID: "m1", Nonce: "n", EncAlgo: OAEPSHA224, SigAlgo: PKCS1v15SHA224, Token: []byte{0xff}, Pub: "PEM"}
	got, err := ParseAuthRequest(roundTrip(t, auth).(*ordered.Map))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(auth, got, cmpOpts); d != "" {
		t.Errorf("auth (-want +got):\n%s", d)
	}
	def, err := ParseAuthRequest(ordered.FromPairs("cmd", "_auth", "id", "m1"))
	if err != nil || def.EncAlgo != OAEPSHA1 || def.SigAlgo != PKCS1v15SHA1 {
		t.Errorf("defaults: %+v, %v", def, err)
	}
	if _, err := ParseAuthRequest(ordered.FromPairs("cmd", "_auth", "id", 5)); !errors.Is(err, ErrBadLoad) {
		t.Errorf("non-string id: %v", err)
	}
	job := &Job{Fun: "cmd.run", Arg: []any{"ls"}, Tgt: []any{"a", "b"}, JID: "2", Ret: "", TgtType: "list",
		User: "root", To: 5, Serial: 9, Kwargs: ordered.New()}
	gotJob, err := ParseJob(roundTrip(t, job).(*ordered.Map))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(job, gotJob, cmpOpts); d != "" {
		t.Errorf("job (-want +got):\n%s", d)
	}
	ret := &Return{ID: "m1", Success: true, Return: ordered.FromPairs("a", 1), Retcode: 0, JID: "3",
		Fun: "x.y", FunArgs: []any{1}, User: "root", Metadata: ordered.FromPairs("k", "v")}
	gotRet, err := ParseReturn(roundTrip(t, ret).(*ordered.Map))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ret, gotRet, cmpOpts); d != "" {
		t.Errorf("return (-want +got):\n%s", d)
	}
}

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name    string
		v       any
		version int
		err     error
	}{
		{"v3", ordered.FromPairs("enc", "clear", "load", ordered.New(), "version", 3), 3, nil},
		{"missing version", ordered.FromPairs("enc", "aes", "load", []byte{1}), 0, nil},
		{"text version", ordered.FromPairs("enc", "aes", "load", []byte{1}, "version", "2"), 2, nil},
		{"float version", ordered.FromPairs("enc", "aes", "load", []byte{1}, "version", 2.9), 2, nil},
		{"junk version", ordered.FromPairs("enc", "aes", "load", []byte{1}, "version", "x"), 0, nil},
		{"no load", ordered.FromPairs("enc", "aes"), 0, ErrBadLoad},
		{"not a map", []any{1}, 0, ErrBadLoad},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := Marshal(tc.v)
			r, err := DecodeRequest(b)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err == nil && r.Version != tc.version {
				t.Errorf("version = %d, want %d", r.Version, tc.version)
			}
		})
	}
}

func TestStamp(t *testing.T) {
	load := ordered.FromPairs("cmd", "_return", "id", "m1")
	Stamp{Nonce: "n", TS: 7, Tok: []byte{9}, ID: "m1"}.Apply(load)
	if d := cmp.Diff([]string{"cmd", "id", "nonce", "ts", "tok"}, load.StringKeys()); d != "" {
		t.Errorf("stamped keys (-want +got):\n%s", d)
	}
	s := TakeStamp(load)
	if s.Nonce != "n" || s.TS != 7 || string(s.Tok) != "\x09" || s.ID != "m1" {
		t.Errorf("TakeStamp = %+v", s)
	}
	if d := cmp.Diff([]string{"cmd", "id", "ts"}, load.StringKeys()); d != "" {
		t.Errorf("after TakeStamp (-want +got):\n%s", d)
	}
}

func TestTags(t *testing.T) {
	tests := []struct{ got, want string }{
		{JobNewTag("20261201010203004005"), "salt/job/20261201010203004005/new"},
		{JobReturnTag("1", "web1"), "salt/job/1/ret/web1"},
		{AuthTag(), "salt/auth"},
		{KeyTag(), "salt/key"},
		{MinionStartTag("web1"), "salt/minion/web1/start"},
		{Tagify("", "x", "", "y"), "salt/x/y"},
		{Tagify("presence", "change"), "salt/presence/change"},
		{EventStamp(time.Date(2026, 12, 1, 1, 2, 3, 4000, time.UTC)), "2026-12-01T01:02:03.000004"},
		{EventStamp(time.Date(2026, 12, 1, 1, 2, 3, 0, time.UTC)), "2026-12-01T01:02:03"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	if j := NewJID(time.Now()); len(j) != 20 {
		t.Errorf("jid %q", j)
	}
}

func TestEvents(t *testing.T) {
	data := ordered.FromPairs("id", "m1", "raw", []byte{0xff}, "_stamp", "2026-12-01T01:02:03")
	b, err := PackEvent("salt/auth", data)
	if err != nil {
		t.Fatal(err)
	}
	tag, got, err := UnpackEvent(b)
	if err != nil || tag != "salt/auth" {
		t.Fatalf("tag %q, err %v", tag, err)
	}
	if d := cmp.Diff(data, got, cmpOpts); d != "" {
		t.Errorf("event (-want +got):\n%s", d)
	}
	if _, err := PackEvent("", data); err == nil {
		t.Errorf("empty tag accepted")
	}
}

func FuzzDecodeRequest(f *testing.F) {
	for _, v := range []any{
		&Request{Enc: EncClear, Version: 3, Load: (&AuthRequest{ID: "m1", Nonce: "n", Pub: "P", Token: []byte{1}}).SaltMap()},
		&Request{Enc: EncAES, Version: 3, Load: []byte("ciphertext"), ID: "m1", EncAlgo: OAEPSHA1, SigAlgo: PKCS1v15SHA1},
		&Publish{Load: []byte("x"), SigAlgo: PKCS1v15SHA1, Sig: []byte("s")},
		&SignedClear{Load: []byte{0x80}, Sig: []byte("s")},
	} {
		b, _ := Marshal(v)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, err := DecodeRequest(data); err == nil {
			if m, ok := r.Load.(*ordered.Map); ok {
				_, _ = ParseAuthRequest(m)
				_, _ = ParseReturn(m)
				_, _ = ParseJob(m)
				_ = TakeStamp(m.Copy())
			}
			if _, err := Marshal(r); err != nil {
				t.Fatalf("repack request: %v", err)
			}
		}
		if p, err := DecodePublish(data); err == nil && p.Load == nil {
			t.Fatalf("publish without load")
		}
		if v, err := Unmarshal(data); err == nil {
			_, _, _ = DecodeSignedClear(v)
			if m, ok := v.(*ordered.Map); ok {
				_, _ = ParseAuthReply(m)
			}
		}
	})
}

func TestFileLoads(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want []string
	}{
		{"serve", &ServeFileRequest{Path: "top.sls", Saltenv: "base", Gzip: 5}, []string{"path", "saltenv", "cmd", "gzip", "loc"}},
		{"serve plain", &ServeFileRequest{Path: "top.sls", Saltenv: "base"}, []string{"path", "saltenv", "cmd", "loc"}},
		{"reply", &ServeFileReply{Data: []byte{0xff}, Dest: "top.sls"}, []string{"data", "dest"}},
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, keysOf(t, roundTrip(t, tc.v))); d != "" {
			t.Errorf("%s keys (-want +got):\n%s", tc.name, d)
		}
	}
	for cmd, want := range map[string][]string{
		CmdFileHash: {"path", "saltenv", "cmd"}, CmdFileList: {"saltenv", "prefix", "cmd"}, CmdFileEnvs: {"cmd"},
	} {
		m, err := FileLoad(cmd, "p", "base", "")
		if err != nil || !cmp.Equal(m.StringKeys(), want) {
			t.Errorf("%s: %v %v", cmd, m.StringKeys(), err)
		}
	}
	if _, err := FileLoad("_nope", "", "", ""); !errors.Is(err, ErrBadLoad) {
		t.Errorf("unknown: %v", err)
	}
	r, err := ParseServeFileReply(roundTrip(t, &ServeFileReply{Data: []byte("text"), Dest: "a", Gzip: 1}))
	if err != nil || string(r.Data) != "text" || r.Gzip != 1 {
		t.Errorf("reply %+v %v", r, err)
	}
}
