package wrapper

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/state/fileclient"
	"github.com/brinesalt/brine/state/modules"
)

// GetFileFun is salt-ssh's cp.get_file wrapper
// (salt/client/ssh/wrapper/cp.py get_file): the controller takes the
// file from its file server and sends it to the host, which writes it
// at dest. The answer is True or False, as Salt's wrapper returns
// `not ret[2]` of its send.
const GetFileFun = "cp.get_file"

// getFileSpec is get_file(path, dest, saltenv="base", makedirs=False,
// template=None, gzip=None).
var getFileSpec = modules.Spec{Params: []modules.Param{
	{Name: "path"}, {Name: "dest"}, {Name: "saltenv", Default: "base", Optional: true},
	{Name: "makedirs", Default: false, Optional: true}, {Name: "template", Optional: true}, {Name: "gzip", Optional: true},
}}

// PlanGetFile returns the executor's planner for salt-ssh cp.get_file.
// The file travels as the state wrapper's files do: small ones inside
// the job, large ones once to the host's content cache by sha256, so
// with --relay they come through the relay. The host's own cp.get_file
// then writes dest from the job's files.
func (s *States) PlanGetFile(args []any, kwargs *ordered.Map) func(context.Context, *sshexec.Host) (*sshexec.Plan, error) {
	return func(ctx context.Context, h *sshexec.Host) (*sshexec.Plan, error) {
		c, err := (&modules.Function{Name: GetFileFun, Spec: getFileSpec}).Bind(&modules.Env{}, args, kwargs)
		if err != nil {
			return wfuncFailure(GetFileFun, err), nil
		}
		if c.Arg("template") != nil {
			// Salt renders path and dest with the host's grains and
			// pillar; Brine's wrapper does not yet, and says so.
			return &sshexec.Plan{Done: true, Retcode: 1,
				Return: "cp.get_file in salt-ssh: template= is not supported by Brine's wrapper"}, nil
		}
		if c.Arg("gzip") != nil {
			s.Log.Warn("The gzip argument to cp.get_file in salt-ssh is unsupported")
		}
		src := c.Str("path")
		saltenv := c.Str("saltenv")
		rel, env := fileclient.ParseURL(src)
		if env != "" {
			saltenv = env
		}
		rel = strings.Trim(path.Clean("/"+rel), "/")
		if !strings.HasPrefix(src, "salt://") || rel == "" {
			return &sshexec.Plan{Done: true, Return: false}, nil
		}
		roots, order := fileRoots(s.Opts)
		entry, local, err := s.entry(ctx, fileclient.New(roots, order), rel, saltenv)
		if err != nil {
			return nil, err
		}
		if entry == nil {
			// cache_file found nothing: Salt's send of "" fails.
			return &sshexec.Plan{Done: true, Return: false}, nil
		}
		var uploads map[string]string
		if local != "" {
			uploads = map[string]string{entry.(*ordered.Map).Value("sha256").(string): local}
		}
		files := ordered.FromPairs(saltenv, ordered.FromPairs(rel, entry))
		return &sshexec.Plan{
			Fun: GetFileFun, Arg: []any{fmt.Sprintf("salt://%s?saltenv=%s", rel, saltenv), c.Str("dest")},
			Kwarg: ordered.FromPairs("makedirs", modules.Truthy(c.Arg("makedirs"))),
			Data:  ordered.FromPairs("files", files), Uploads: uploads,
			Then: func(ret any, rc int) (any, int) {
				s, ok := ret.(string)
				return rc == 0 && ok && s != "", rc
			},
		}, nil
	}
}
