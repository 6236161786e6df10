//go:build !apexlite

package cli

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"time"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/device/ios"
)

// reach is what this machine has for reaching devices.
type reach struct {
	adbBinary bool // adb is on PATH (it starts the server on demand)
	adbServer bool // an adb server answers already
	wdaURLs   int  // WebDriverAgent URLs from apex.yaml and APEX_WDA_URLS
}

// blockedBy says why a playground without --sim cannot set up any session
// here, or nil when some device may be reached.
func blockedBy(r reach) error {
	if r.adbBinary || r.adbServer || r.wdaURLs > 0 {
		return nil
	}
	return errors.New("no way to reach a device on this machine: install adb (apt-get install adb) and connect an Android phone, list iPhones' WebDriverAgent URLs in APEX_WDA_URLS, or restart with --sim for the simulated phone")
}

// playgroundBlocked checks what this machine has, for a playground that
// lists the machine's devices.
func playgroundBlocked(ctx context.Context, env *Env) error {
	var r reach
	if _, err := exec.LookPath("adb"); err == nil {
		r.adbBinary = true
	}
	if c, err := adb.NewClient(&adb.Options{Log: env.Log}); err == nil {
		d := net.Dialer{Timeout: 300 * time.Millisecond}
		if conn, err := d.DialContext(ctx, "tcp", c.Addr()); err == nil {
			conn.Close()
			r.adbServer = true
		}
	}
	urls, _ := configuredWDAURLs() // a broken file is reported when listing
	r.wdaURLs = len(urls) + len(ios.URLsFromEnv(os.Getenv))
	return blockedBy(r)
}
