package event

// Run statuses: how a run (a script, a goal, a playground or MCP task)
// ended, as the store records it.
const (
	RunRunning  = "running"
	RunPassed   = "passed"
	RunFailed   = "failed"
	RunError    = "error" // the device or Apex broke
	RunCanceled = "canceled"
	// RunLost is a run whose process ended (killed, crashed) without
	// finishing it, as a later process found it.
	RunLost = "lost"
)
