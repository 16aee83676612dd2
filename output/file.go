package output

import (
	"fmt"
	"os"
)

// OpenFile opens the --out-file of salt and salt-ssh for writing.
// Salt's OutputOptionsMixIn.process_output_file empties an existing file
// unless --out-file-append is given (keeping its mode), and
// display_output then appends every document to it
// (salt/utils/parsers.py, salt/output/__init__.py). A new file is created
// 0600 rather than with the umask, since returns may hold secrets.
func OpenFile(path string, appendTo bool) (*os.File, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if !appendTo {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open --out-file: %w", err)
	}
	return f, nil
}
