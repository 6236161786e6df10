package android

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/device"
)

var (
	_ device.Sheller   = (*Driver)(nil)
	_ device.Installer = (*Driver)(nil)
)

// Shell runs a command in the device's shell and returns what it wrote;
// a non-zero exit status is an error carrying its stderr. Scripts'
// runAdbShell steps, the tracer's logcat and MCP's shell tool use it.
func (d *Driver) Shell(ctx context.Context, cmd string) (string, error) {
	out, err := adb.ShellLimit(ctx, d.t, cmd, device.ShellOutputLimit)
	if err != nil {
		return string(out), fmt.Errorf("android %s: shell %q: %w", d.serial, cmd, err)
	}
	return string(out), nil
}

// Install installs the APK at apk (a file on this machine), replacing the
// app when it is there: it copies the file to the device's temp directory,
// runs pm install and removes the copy.
func (d *Driver) Install(ctx context.Context, apk string) error {
	remote := "/data/local/tmp/apex-" + strings.ReplaceAll(path.Base(strings.ReplaceAll(apk, `\`, "/")), " ", "_")
	if err := adb.PushFile(ctx, d.t, apk, remote); err != nil {
		return fmt.Errorf("android %s: install: copy %s to %s: %w", d.serial, apk, remote, err)
	}
	out, err := d.shell(ctx, "pm install -r "+quote(remote))
	d.shell(context.WithoutCancel(ctx), "rm -f "+quote(remote))
	if err != nil {
		return fmt.Errorf("android %s: install %s: %w", d.serial, apk, err)
	}
	if msg := strings.TrimSpace(out); !strings.Contains(msg, "Success") {
		return fmt.Errorf("android %s: install %s: pm install said: %s", d.serial, apk, msg)
	}
	return nil
}
