// Package cli implements the apex command: one file per subcommand, each
// built from an Options struct so it can be tested without a terminal.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"
)

// Env is what every command shares: output streams, the logger and the
// global flags.
type Env struct {
	Out, Err io.Writer
	Log      *slog.Logger
	JSON     bool // --json: machine-readable output
	logLevel string
}

// ExitError carries a process exit code through cobra without printing twice.
type ExitError struct {
	Code int
	Err  error
	// Shown means the command already printed Err's reason (in its
	// result), so Main does not print it again.
	Shown bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// errHandOff is what the light build (lite.go) returns for a command line
// only the full build runs (--sim, --farm): Main hands it over whole.
var errHandOff = errors.New("this command line runs in the full apex build")

// annotBlocks marks a command that serves until interrupted, so a
// command line chaining another after it with && never reaches it.
const annotBlocks = "apex/blocks"

// NewRoot builds the apex command tree writing to out and errOut.
func NewRoot(out, errOut io.Writer) *cobra.Command {
	env := &Env{Out: out, Err: errOut, Log: slog.New(slog.DiscardHandler)}
	root := &cobra.Command{
		Use:   "apex",
		Short: "Apex drives phones: Android over ADB, iPhones over WebDriverAgent, and a built-in simulated phone",
		Long: `Apex automates phones for tests and AI agents.

It runs YAML scripts (Midscene-compatible) against a device, observes each
screen as a compact Scene, and leaves a record and a report of every step.
Try it without hardware: apex run --sim examples/shop-checkout.yaml`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(env.logLevel)); err != nil {
				return fmt.Errorf("--log-level %q: use debug, info, warn or error", env.logLevel)
			}
			env.Log = slog.New(slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: level}))
			return nil
		},
	}
	root.Version = readBuildInfo().String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(out)
	root.SetErr(errOut)
	root.PersistentFlags().StringVar(&env.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	root.PersistentFlags().BoolVar(&env.JSON, "json", false, "print machine-readable JSON")
	// The one-shot commands, which the light build (lite.go) runs itself;
	// faces.go adds the rest.
	root.AddCommand(
		newCmdVersion(env),
		newCmdScene(env),
		newCmdDevices(env),
		newCmdScreenshot(env),
		newCmdSource(env),
	)
	addFaces(root, env)
	usageOnArgErrors(root)
	return root
}

// usageOnArgErrors makes every command whose arguments are wrong show its
// usage under the error, so "apex run" alone says what it takes.
func usageOnArgErrors(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return fmt.Errorf("%w\n\n%s", err, strings.TrimRight(cmd.UsageString(), "\n"))
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageOnArgErrors(sub)
	}
}

// Main runs the command line and returns the process exit code. Ctrl-C
// cancels the context so commands stop cleanly.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	root := NewRoot(os.Stdout, os.Stderr)
	root.SetArgs(args)
	err := errHandOff
	if !handsOff(root, args) {
		err = root.ExecuteContext(ctx)
	}
	if errors.Is(err, errHandOff) {
		return handOff(args)
	}
	if err == nil {
		return 0
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		if exit.Err != nil && !exit.Shown {
			fmt.Fprintln(os.Stderr, "apex:", exit.Err)
		}
		return exit.Code
	}
	fmt.Fprintln(os.Stderr, "apex:", strings.TrimSpace(err.Error()))
	return 1
}
