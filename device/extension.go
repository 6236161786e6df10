package device

import "context"

// Drivers may offer more than the Driver contract. Callers find out with a
// type assertion and, when it fails, tell the user the device cannot do it
// (wrapping ErrUnsupported). Extensions are as safe for concurrent use as
// the Driver that offers them.

// Sheller is a driver that runs shell commands on the device (Android's,
// over adb). Shell returns what the command wrote; a non-zero exit status
// is an error carrying its stderr.
type Sheller interface {
	Shell(ctx context.Context, cmd string) (string, error)
}

// Installer is a driver that installs apps from a file on the machine Apex
// runs on (Android's: an APK). Installing an app that is already there
// replaces it.
type Installer interface {
	Install(ctx context.Context, path string) error
}
