package thin

import (
	"io"
	"strings"
	"testing"
)

// TestReadLineLeavesTheRest: the sudo helper takes the password line and
// leaves the job after it on stdin for sudo's command.
func TestReadLineLeavesTheRest(t *testing.T) {
	r := strings.NewReader("s3cret pass\n{\"fun\":\"test.ping\"}\n")
	line, err := readLine(r)
	rest, _ := io.ReadAll(r)
	if err != nil || line != "s3cret pass" || string(rest) != "{\"fun\":\"test.ping\"}\n" {
		t.Errorf("readLine = %q, %v; rest %q", line, err, rest)
	}
	if line, err := readLine(strings.NewReader("no newline")); line != "no newline" || err != io.EOF {
		t.Errorf("readLine without newline = %q, %v", line, err)
	}
}
