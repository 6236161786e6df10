//go:build apexlite && unix

package cli

import (
	"os"
	"syscall"
)

// execFull runs the full build in this process, which it replaces: the
// exit code, signals and the terminal are the full build's own.
func execFull(full string, args []string) error {
	return syscall.Exec(full, append([]string{full}, args...), os.Environ())
}
