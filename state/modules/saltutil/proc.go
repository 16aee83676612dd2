package saltutil

import (
	"context"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/saltutil/proc"
)

// The running-jobs registry and the custom grains loader live in package
// proc, which the thin binary links without the rest of saltutil; these
// names keep saltutil's API.
type (
	// Job is proc.Job.
	Job = proc.Job
	// JobRegistry is proc.JobRegistry.
	JobRegistry = proc.JobRegistry
)

// ContextKey is proc.ContextKey.
const ContextKey = proc.ContextKey

var (
	// Jobs is proc.Jobs, the registry of this process.
	Jobs = proc.Jobs
	// ErrSignalled is proc.ErrSignalled.
	ErrSignalled = proc.ErrSignalled
)

// NewJobRegistry is proc.NewJobRegistry.
func NewJobRegistry() *JobRegistry { return proc.NewJobRegistry() }

// LoadCustomGrains is proc.LoadCustomGrains.
func LoadCustomGrains(ctx context.Context, dir string) (*ordered.Map, error) {
	return proc.LoadCustomGrains(ctx, dir)
}

// ExtmodsDir is proc.ExtmodsDir.
func ExtmodsDir(opts *ordered.Map) string { return proc.ExtmodsDir(opts) }

// GrainsDir is proc.GrainsDir.
func GrainsDir(opts *ordered.Map) string { return proc.GrainsDir(opts) }

// CustomGrainTimeout is proc.CustomGrainTimeout.
const CustomGrainTimeout = proc.CustomGrainTimeout

// registry is the job registry a call uses: Env.Context[ContextKey] when
// set (tests), else Jobs.
func registry(env *modules.Env) *JobRegistry {
	if r, ok := env.Context[ContextKey].(*JobRegistry); ok {
		return r
	}
	return Jobs
}
