//go:build apexlite && !unix

package cli

import (
	"errors"
	"os"
	"os/exec"
)

// execFull runs the full build as a child with this process's streams and
// exits with its exit code (no exec(2) here).
func execFull(full string, args []string) error {
	cmd := exec.Command(full, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err == nil || errors.As(err, &exit) {
		os.Exit(cmd.ProcessState.ExitCode())
	}
	return err
}
