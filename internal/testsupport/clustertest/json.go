package clustertest

import (
	"encoding/json"
	"io"
	"strings"
)

// JSONDocs decodes the JSON documents a tool printed one after another
// (salt and salt-cp print one per minion with --out json, salt --static
// one for all) and fails the test if out is anything else.
func JSONDocs(t T, out string) []map[string]any {
	t.Helper()
	var docs []map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if err == io.EOF {
			return docs
		}
		if err != nil {
			t.Fatalf("not a stream of JSON documents: %v\n%s", err, out)
		}
		docs = append(docs, d)
	}
}
