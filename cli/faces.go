//go:build !apexlite

package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// addFaces adds the commands that link the heavy world (the runner and
// its SQLite store, agents and models, MCP, the playground, the farm and
// its embedded NATS) to root. The light build (lite.go) hands them to this
// build instead, so that its one-shot commands start like a small program.
func addFaces(root *cobra.Command, env *Env) {
	root.AddCommand(
		newCmdSim(env),
		newCmdRun(env),
		newCmdReport(env),
		newCmdHosts(env),
		newCmdDo(env),
		newCmdMCP(env),
		newCmdAct(env),
		newCmdModel(env),
		newCmdPlayground(env),
		newCmdFarm(env),
		newCmdRuns(env),
	)
}

// handsOff reports whether another build runs args: this one runs them all.
func handsOff(*cobra.Command, []string) bool { return false }

// handOff is never called in this build (nothing returns errHandOff).
func handOff(args []string) int {
	panic("apex: the full build handed off " + strings.Join(args, " "))
}
