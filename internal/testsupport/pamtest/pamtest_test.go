package pamtest

import (
	"os"
	"strings"
	"testing"
)

// Inside the namespace the user and its groups exist; outside, nothing
// changed.
func TestFixture(t *testing.T) {
	f := New(t, "brinepam1", "s3cret pass", "brinepamg")
	out, err := f.Command("id", f.User).CombinedOutput()
	if err != nil {
		t.Fatalf("id in the namespace: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "(brinepam1)") || !strings.Contains(string(out), "(brinepamg)") {
		t.Errorf("id = %s", out)
	}
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), f.User) {
		t.Error("the user leaked into the real /etc/passwd")
	}
	if _, err := os.Stat("/etc/pam.d/" + f.Service); err == nil {
		t.Error("the test service leaked into the real /etc/pam.d")
	}
	out, err = f.Command("cat", "/etc/pam.d/"+ServiceName).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "nodelay") {
		t.Errorf("service file in the namespace: %v %s", err, out)
	}
}
