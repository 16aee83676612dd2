package filestate

import (
	"context"
	"encoding/base64"
	"os"
	"strings"

	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/states"
)

var decodeSpec = spec(false, opt("encoded_data", nil), opt("contents_pillar", nil),
	opt("encoding_type", "base64"), opt("checksum", "md5"))

// decode is file.decode: write base64-encoded data (given, or from
// pillar) to name, compared by checksum.
func decode(_ context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.False, "")
	enc, pil := c.Arg("encoded_data"), c.Arg("contents_pillar")
	var content string
	switch {
	case !modules.Truthy(enc) && !modules.Truthy(pil):
		return nil, modules.Errorf("Specify either the 'encoded_data' or 'contents_pillar' argument.")
	case modules.Truthy(enc) && modules.Truthy(pil):
		return nil, modules.Errorf("Specify only one 'encoded_data' or 'contents_pillar' argument.")
	case modules.Truthy(enc):
		content = py.Str(enc)
	default:
		v, ok := traverse(c.Env.Pillar, py.Str(pil), ":")
		if !ok || v == false {
			return nil, modules.Errorf("Pillar data not found.")
		}
		content = py.Str(v)
	}
	// base64.decodebytes ignores line breaks and surrounding whitespace.
	data, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(content), ""))
	if err != nil {
		return nil, modules.Errorf("Incorrect padding")
	}
	form := c.Str("checksum")
	in, err := file.HashBytes(data, form)
	if err != nil {
		return nil, err
	}
	if isFile(name) {
		out, err := file.GetHash(name, form)
		if err != nil {
			return nil, err
		}
		if in == out {
			r.Result, r.Comment = states.True, "File is in the correct state."
			return r, nil
		}
		r.Changes.Set("old", out)
		r.Changes.Set("new", in)
	}
	if c.Env.Test {
		r.Result, r.Comment = states.None, "File is set to be updated."
		return r, nil
	}
	if err := os.WriteFile(name, data, 0o666); err != nil {
		return nil, modules.Errorf("%s", err.Error())
	}
	r.Result, r.Comment = states.True, "File was updated."
	if r.Changes.Len() == 0 {
		r.Changes.Set("old", nil)
		r.Changes.Set("new", in)
	}
	return r, nil
}
