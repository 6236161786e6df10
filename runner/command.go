package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/engine"
	"github.com/apexagent/apex/script"
)

// Steps that run commands on the device (runAdbShell, runWdaRequest) are
// bounded in time (CommandTimeout, or the step's timeout:) and in what they
// keep of the output (device.ShellOutputLimit).

func shell(ctx context.Context, s *engine.Session, rec *engine.Record, st script.Step) error {
	sh, ok := s.Raw().(device.Sheller)
	if !ok {
		return errNoShell
	}
	rec.Acted, rec.Action = true, "runAdbShell"
	ctx, cancel, limit := commandTimeout(ctx, st)
	defer cancel()
	res, err := engine.Timed(s, func() (string, error) { return sh.Shell(ctx, st.Value) })
	rec.Result = map[string]string{"command": st.Value, "output": res}
	if err != nil {
		return timedOut(ctx, fmt.Errorf("adb shell %q: %w", st.Value, err), limit)
	}
	return nil
}

// CommandTimeout is how long a runAdbShell or runWdaRequest step may run
// unless its timeout: says otherwise: a logcat or an `am instrument -w`
// must not hang a run.
const CommandTimeout = 60 * time.Second

// commandTimeout bounds ctx by st's timeout (CommandTimeout by default);
// ending it stops the command on the device.
func commandTimeout(ctx context.Context, st script.Step) (context.Context, context.CancelFunc, time.Duration) {
	d := cmp.Or(st.Timeout, CommandTimeout)
	ctx, cancel := context.WithTimeoutCause(ctx, d, errCommandTimeout)
	return ctx, cancel, d
}

var errCommandTimeout = errors.New("command timed out")

// timedOut says so when err is the step's own timeout.
func timedOut(ctx context.Context, err error, d time.Duration) error {
	if errors.Is(context.Cause(ctx), errCommandTimeout) {
		return fmt.Errorf("%w after %v (set timeout: on the step for longer): %w", errCommandTimeout, d, err)
	}
	return err
}

func wdaRequest(ctx context.Context, s *engine.Session, rec *engine.Record, st script.Step) error {
	wr, ok := s.Raw().(WDARequester)
	if !ok {
		return fmt.Errorf("runWdaRequest needs an iPhone driven over WebDriverAgent: %w", device.ErrUnsupported)
	}
	rec.Acted, rec.Action = true, "runWdaRequest"
	ctx, cancel, limit := commandTimeout(ctx, st)
	defer cancel()
	res, err := engine.Timed(s, func() ([]byte, error) { return wr.WDARequest(ctx, st.Method, st.Endpoint, st.Params) })
	if len(res) > device.ShellOutputLimit {
		res = fmt.Appendf(res[:device.ShellOutputLimit:device.ShellOutputLimit], "\n[response truncated at %d bytes: %d more dropped]\n", device.ShellOutputLimit, len(res)-device.ShellOutputLimit)
	}
	rec.Result = map[string]string{"method": st.Method, "endpoint": st.Endpoint, "response": string(res)}
	if err != nil {
		return timedOut(ctx, fmt.Errorf("WDA %s %s: %w", st.Method, st.Endpoint, err), limit)
	}
	return nil
}
