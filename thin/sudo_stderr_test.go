package thin

import (
	"bytes"
	"strings"
	"testing"
)

// feed writes in to a sudoStderr in chunks of n bytes (all at once for
// n <= 0) and returns what passed through and the events seen.
func feed(in string, n int) (string, string) {
	var out bytes.Buffer
	var events strings.Builder
	s := &sudoStderr{w: &out, onPrompt: func() { events.WriteString("P") }, onStarted: func() { events.WriteString("S") }}
	b := []byte(in)
	for len(b) > 0 {
		k := len(b)
		if n > 0 && n < k {
			k = n
		}
		if m, err := s.Write(b[:k]); m != k || err != nil {
			return "write error", ""
		}
		b = b[k:]
	}
	s.flush()
	return out.String(), events.String()
}

// TestSudoStderrTakesOutTheConversation: prompts and the started line are
// taken out of sudo's stderr wherever writes split them, what sudo says
// passes through, and after the started line nothing is interpreted.
func TestSudoStderrTakesOutTheConversation(t *testing.T) {
	tests := []struct {
		name, in, out, events string
	}{
		{"nothing", "", "", ""},
		{"no password needed", startedLine + "job log\n", "job log\n", "S"},
		{"asked once", sudoPrompt + startedLine, "", "PS"},
		{"refused", sudoPrompt + "Sorry, try again.\n" + sudoPrompt + "sudo: 1 incorrect password attempt\n",
			"Sorry, try again.\nsudo: 1 incorrect password attempt\n", "PP"},
		{"lecture first", "We trust you have received the usual lecture\n" + sudoPrompt + startedLine,
			"We trust you have received the usual lecture\n", "PS"},
		{"job prints a prompt", startedLine + sudoPrompt + startedLine, sudoPrompt + startedLine, "S"},
		{"partial prompt left", "[salt:sudo:d11", "[salt:sudo:d11", ""},
		{"bracket text", "[brine] [salt] x\n", "[brine] [salt] x\n", ""},
	}
	for _, tt := range tests {
		for _, n := range []int{0, 1, 7} {
			out, events := feed(tt.in, n)
			if out != tt.out || events != tt.events {
				t.Errorf("%s, chunks of %d: out %q events %q, want %q %q", tt.name, n, out, events, tt.out, tt.events)
			}
		}
	}
}

// FuzzSudoStderr: whatever sudo prints, the bytes that pass through plus
// the tokens taken out are what came in, however it is split.
func FuzzSudoStderr(f *testing.F) {
	f.Add("Sorry, try again.\n"+sudoPrompt+startedLine+"x", 3)
	f.Add(sudoPrompt[:10]+startedLine, 1)
	f.Fuzz(func(t *testing.T, in string, n int) {
		whole, ev := feed(in, 0)
		split, ev2 := feed(in, n%64)
		if whole != split || ev != ev2 {
			t.Fatalf("split %d: %q %q, whole: %q %q", n%64, split, ev2, whole, ev)
		}
		if len(whole)+strings.Count(ev, "P")*len(sudoPrompt)+strings.Count(ev, "S")*len(startedLine) != len(in) {
			t.Fatalf("bytes lost: %q -> %q %q", in, whole, ev)
		}
	})
}
