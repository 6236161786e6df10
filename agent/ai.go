package agent

import (
	"context"

	"github.com/apexagent/apex/event"
)

// AI is what the runner, the playground and the MCP server ask of the AI
// runtime; *Runtime implements it, and tests may fake it. Implementations
// must be safe for concurrent use.
type AI interface {
	// Act carries out a natural-language goal to its end.
	Act(ctx context.Context, t Task) (*Result, error)
	// Assert checks that t.Goal holds on the device now.
	Assert(ctx context.Context, t Task) (*Verdict, error)
	// Query reads t.Goal off the screen; kind is QueryAny, QueryBoolean,
	// QueryNumber or QueryString.
	Query(ctx context.Context, t Task, kind string) (any, error)
	// Offline reports that no model is configured: only goals in the
	// controlled language can run.
	Offline() bool
}

var _ AI = (*Runtime)(nil)

// RunStatus is how the run recording a goal ended (event.Run*): passed
// when it was done, canceled, error when the runtime could not run it,
// failed otherwise; reason says why it did not pass.
func RunStatus(res *Result, err error) (status, reason string) {
	switch {
	case res == nil && err != nil:
		return event.RunError, err.Error()
	case res == nil:
		return event.RunError, "the runtime ended without a result"
	case res.Status == Done:
		return event.RunPassed, ""
	case res.Status == Canceled:
		return event.RunCanceled, res.Reason
	}
	return event.RunFailed, res.Reason
}
