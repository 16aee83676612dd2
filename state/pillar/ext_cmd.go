package pillar

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// CmdYAML is salt/pillar/cmd_yaml.py: `- cmd_yaml: <command>` runs the
// command through the shell ($SHELL, else /bin/sh) on the compiling machine, with %s replaced
// by the minion id, and loads its standard output as YAML. A command or
// parse failure is logged and adds nothing, as in Salt.
var CmdYAML = ExtPillar{Name: "cmd_yaml", Params: []string{"command"}, Fn: cmdYAML}

// CmdJSON is salt/pillar/cmd_json.py: `- cmd_json: <command>` runs the
// command without a shell (split as shlex does), with %s replaced by the
// minion id, and loads its output, standard error included (cmd.run's
// redirect_stderr), as JSON. Failures are logged and add nothing.
var CmdJSON = ExtPillar{Name: "cmd_json", Params: []string{"command"}, Fn: cmdJSON}

func cmdYAML(ctx context.Context, x *ExtCall) (any, error) {
	command := strings.ReplaceAll(x.Str("command"), "%s", x.MinionID)
	out, err := runCommand(ctx, []string{shell(), "-c", command}, false)
	if err == nil {
		var v any
		if v, err = saltyaml.Load([]byte(out), "<cmd_yaml>"); err == nil {
			return v, nil
		}
	}
	x.Log.Error(fmt.Sprintf("YAML data from '%s' failed to parse. Command output:\n%s", command, out), logattr.Err, err)
	return ordered.New(), nil
}

func cmdJSON(ctx context.Context, x *ExtCall) (any, error) {
	command := strings.ReplaceAll(x.Str("command"), "%s", x.MinionID)
	argv, err := py.Split(command)
	var out string
	if err == nil && len(argv) == 0 {
		err = fmt.Errorf("empty command")
	}
	if err == nil {
		out, err = runCommand(ctx, argv, true)
	}
	if err == nil {
		var v any
		if v, err = ordered.DecodeJSON(strings.NewReader(out)); err == nil {
			return v, nil
		}
	}
	x.Log.Error(fmt.Sprintf("JSON data from %s failed to parse", command), logattr.Err, err)
	return ordered.New(), nil
}

// shell is the shell cmd.run uses with python_shell: $SHELL, else
// /bin/sh (salt/grains/extra.py shell).
func shell() string {
	if s := os.Getenv("SHELL"); s != "" {
		return s
	}
	return "/bin/sh"
}

// runCommand runs argv in the user's home directory as cmd.run does and
// returns its output with trailing whitespace removed. A non-zero exit is
// not an error: Salt parses whatever was printed.
func runCommand(ctx context.Context, argv []string, withStderr bool) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if home, err := os.UserHomeDir(); err == nil {
		cmd.Dir = home
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if withStderr {
		cmd.Stderr = &out
	}
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if _, isExit := err.(*exec.ExitError); isExit && ctx.Err() == nil {
		err = nil
	}
	if err != nil {
		return "", fmt.Errorf("run %s: %w", argv[0], err)
	}
	return strings.TrimRight(out.String(), " \t\r\n"), nil
}
