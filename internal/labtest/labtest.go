// Package labtest starts simulated phones for tests and drives them the way
// `apex run --sim` does: through the phone's adbd over TCP and the Android
// driver, with no adb server.
package labtest

import (
	"context"
	"testing"
	"time"

	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/sim/lab"
)

// Android starts the lab opts describes (one Android phone when opts is
// zero) and opens its first phone; both end with the test.
func Android(t testing.TB, opts lab.Options) (*lab.Device, *android.Driver) {
	t.Helper()
	l, err := lab.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	dev := l.Devices()[0]
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(20*time.Second))
	defer cancel()
	d, err := android.OpenDirect(ctx, dev.Addr, Driver())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return dev, d
}

// App starts one Android phone, as Android does, with the app pkg in front.
func App(t testing.TB, pkg string) (*lab.Device, *android.Driver) {
	t.Helper()
	dev, d := Android(t, lab.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(20*time.Second))
	defer cancel()
	if err := d.LaunchApp(ctx, pkg); err != nil {
		t.Fatal(err)
	}
	return dev, d
}

// Driver is the Android driver's options for a test's simulated phone: the
// defaults, but a call may take as long as patience allows (beside `make
// stress`'s CPU hog one screenshot passed the 15 s default).
func Driver() *android.Options {
	return &android.Options{Timeout: patience.Of(15 * time.Second)}
}
