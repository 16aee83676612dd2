package apiclients

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
	"github.com/google/go-cmp/cmp"
)

// TestE2ESeedRequestsClient runs the seed's Python requests class
// (testdata/seed_client.py) as written: PAM login against a real user,
// local_async, then GET /jobs/<jid> until every minion returned.
func TestE2ESeedRequestsClient(t *testing.T) {
	e := need(t)
	py := "/usr/bin/python3" // Debian's, which has python3-requests
	if err := exec.Command(py, "-c", "import requests").Run(); err != nil {
		testhosts.Skip(t, "python3-requests not installed for /usr/bin/python3 (scripts/install-deps.sh installs it)")
	}
	in, _ := json.Marshal(map[string]any{"url": e.url, "username": apiUser, "password": e.passwd[apiUser], "tgt": "*", "fun": "test.ping"})
	cmd := exec.Command(py, "testdata/seed_client.py")
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("seed client: %v\n%s%s", err, out, stderrOf(err))
	}
	var got struct {
		JID string `json:"jid"`
		Job struct {
			Info []struct {
				JID      string                    `json:"jid"`
				Function string                    `json:"Function"`
				Target   string                    `json:"Target"`
				User     string                    `json:"User"`
				Minions  []string                  `json:"Minions"`
				Result   map[string]map[string]any `json:"Result"`
			} `json:"info"`
			Return []map[string]any `json:"return"`
		} `json:"job"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("seed client output: %v\n%s", err, out)
	}
	if len(got.JID) != 20 || len(got.Job.Info) != 1 || len(got.Job.Return) != 1 {
		t.Fatalf("seed client: jid %q, job %s", got.JID, out)
	}
	info := got.Job.Info[0]
	minions := slices.Sorted(slices.Values(info.Minions))
	if diff := cmp.Diff(e.minions, minions); diff != "" || info.JID != got.JID || info.Function != "test.ping" || info.Target != "*" || info.User != apiUser {
		t.Errorf("GET /jobs/%s info: %+v (minions -want +got %s)", got.JID, info, diff)
	}
	want := map[string]any{}
	for _, m := range e.minions {
		want[m] = true
		if r := info.Result[m]; r["return"] != true || r["success"] != true {
			t.Errorf("info Result[%s] = %v, want return and success true", m, r)
		}
	}
	if diff := cmp.Diff(want, got.Job.Return[0]); diff != "" {
		t.Errorf("GET /jobs/%s return (-want +got):\n%s", got.JID, diff)
	}
}

// stderrOf is the standard error an exec.ExitError kept.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
