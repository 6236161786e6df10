package agent

import "context"

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
