//go:build !linux && !windows

package coregrains

import (
	"context"
	"fmt"
	"runtime"
)

func gatherCore(ctx context.Context, o GatherOptions) (map[string]any, error) {
	return nil, fmt.Errorf("%w (%s)", ErrUnsupported, runtime.GOOS)
}
