package device

import "context"

// Drivers may offer more than the Driver contract. Callers find out with a
// type assertion and, when it fails, tell the user the device cannot do it
// (wrapping ErrUnsupported). Extensions are as safe for concurrent use as
// the Driver that offers them.

// Sheller is a driver that runs shell commands on the device (Android's,
// over adb). Shell returns what the command wrote, at most
// ShellOutputLimit bytes of it (the rest is dropped, and a line saying
// "output truncated at N bytes" ends the output); a non-zero exit status
// is an error carrying its stderr. Cancelling ctx stops the command on the
// device too.
type Sheller interface {
	Shell(ctx context.Context, cmd string) (string, error)
}

// ShellOutputLimit bounds what Sheller.Shell keeps of a command's output
// (stdout, and stderr apart): a step's shell command (a logcat, a loop)
// must not fill memory and the record.
const ShellOutputLimit = 1 << 20

// Installer is a driver that installs apps from a file on the machine Apex
// runs on (Android's: an APK). Installing an app that is already there
// replaces it.
type Installer interface {
	Install(ctx context.Context, path string) error
}
