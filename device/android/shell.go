package android

import (
	"context"
	"fmt"
)

// Shell runs a command in the device's shell and returns what it wrote;
// a non-zero exit status is an error carrying its stderr. Scripts' runAdbShell
// steps use it (runner.Sheller).
func (d *Driver) Shell(ctx context.Context, cmd string) (string, error) {
	out, err := d.shell(ctx, cmd)
	if err != nil {
		return out, fmt.Errorf("android %s: shell %q: %w", d.serial, cmd, err)
	}
	return out, nil
}
