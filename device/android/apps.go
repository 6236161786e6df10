package android

import (
	"context"
	"fmt"
	"strings"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/internal/lazy"
)

// validPackage keeps package names out of shell syntax.
var validPackage = lazy.Regexp(`^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$`)

func checkPackage(app string) error {
	if !validPackage().MatchString(app) {
		return fmt.Errorf("%q is not an Android package name (like com.example.app)", app)
	}
	return nil
}

// LaunchApp starts an app: a package at its launcher activity, a
// component (pkg/.Activity) as given, or a URL (with a scheme) in the app
// that views it (a VIEW intent: the browser for http and https).
func (d *Driver) LaunchApp(ctx context.Context, app string) error {
	if strings.Contains(app, "://") {
		return d.startIntent(ctx, "open "+app, "am start -a android.intent.action.VIEW -d "+quote(app))
	}
	if pkg, _, ok := strings.Cut(app, "/"); ok {
		if err := checkPackage(pkg); err != nil {
			return fmt.Errorf("android %s: launch %s: %w", d.serial, app, err)
		}
		return d.startIntent(ctx, "launch "+app, "am start -n "+quote(app))
	}
	if err := checkPackage(app); err != nil {
		return fmt.Errorf("android %s: launch: %w", d.serial, err)
	}
	var comp string
	err := d.call(ctx, "launch "+app, true, d.opts.Timeout, func(ctx context.Context) error {
		out, err := d.shell(ctx, "cmd package resolve-activity --brief "+app)
		if err != nil {
			return err
		}
		comp = lastComponent(out)
		return nil
	})
	if err != nil {
		return err
	}
	if comp == "" {
		return fmt.Errorf("android %s: launch %s: no launcher activity (is it installed? `adb shell pm list packages %s`): %w", d.serial, app, app, device.ErrNotFound)
	}
	return d.startIntent(ctx, "launch "+app, "am start -n "+quote(comp))
}

// startIntent runs an am start command line; am reports a failure in its
// output, with a zero exit status.
func (d *Driver) startIntent(ctx context.Context, what, cmd string) error {
	return d.call(ctx, what, false, 2*d.opts.Timeout, func(ctx context.Context) error {
		out, err := d.shell(ctx, cmd)
		if err != nil {
			return err
		}
		if strings.Contains(out, "Error:") || strings.Contains(out, "Exception") {
			return fmt.Errorf("%s: %s", cmd, strings.TrimSpace(out))
		}
		return nil
	})
}

// lastComponent finds the "pkg/.Activity" line resolve-activity prints
// last; "No activity found" yields "".
func lastComponent(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.Contains(l, "/") && !strings.ContainsAny(l, " =") {
			return l
		}
	}
	return ""
}

// TerminateApp force-stops an app.
func (d *Driver) TerminateApp(ctx context.Context, app string) error {
	if err := checkPackage(app); err != nil {
		return fmt.Errorf("android %s: terminate: %w", d.serial, err)
	}
	return d.call(ctx, "terminate "+app, true, d.opts.Timeout, func(ctx context.Context) error {
		_, err := d.shell(ctx, "am force-stop "+app)
		return err
	})
}

var (
	focusRe    = lazy.Regexp(`mCurrentFocus=Window\{\S+ u\d+ ([A-Za-z0-9_.]+)/`)
	focusAppRe = lazy.Regexp(`mFocusedApp=.*?u\d+ ([A-Za-z0-9_.]+)/`)
)

// ForegroundApp returns the package of the focused window, or of the
// focused app when a system window (keyguard, shade) has the focus.
func (d *Driver) ForegroundApp(ctx context.Context) (string, error) {
	var pkg string
	err := d.call(ctx, "foreground app", true, d.opts.Timeout, func(ctx context.Context) error {
		out, err := d.shell(ctx, "dumpsys window")
		if err != nil {
			return err
		}
		pkg, err = parseForeground(out)
		return err
	})
	return pkg, err
}

func parseForeground(out string) (string, error) {
	if m := focusRe().FindStringSubmatch(out); m != nil {
		return m[1], nil
	}
	if m := focusAppRe().FindStringSubmatch(out); m != nil {
		return m[1], nil
	}
	return "", fmt.Errorf("dumpsys window shows no focused app: %w", device.ErrNotFound)
}

// screenState reads whether the screen is on and the keyguard shows.
func (d *Driver) screenState(ctx context.Context) (awake, locked bool, err error) {
	out, err := d.shell(ctx, "dumpsys power | grep mWakefulness=; dumpsys window | grep -E 'mShowingLockscreen|isStatusBarKeyguard|mDreamingLockscreen' || true")
	if err != nil {
		return false, false, err
	}
	if !strings.Contains(out, "mWakefulness=") {
		return false, false, fmt.Errorf("dumpsys power shows no mWakefulness: %q", out)
	}
	awake = strings.Contains(out, "mWakefulness=Awake")
	locked = strings.Contains(out, "mShowingLockscreen=true") || strings.Contains(out, "isStatusBarKeyguard=true") || strings.Contains(out, "mDreamingLockscreen=true")
	return awake, locked, nil
}

// Lock turns the screen off (KEYCODE_SLEEP), which arms the keyguard.
func (d *Driver) Lock(ctx context.Context) error {
	return d.call(ctx, "lock", true, d.opts.Timeout, func(ctx context.Context) error {
		if _, err := d.shell(ctx, fmt.Sprintf("input keyevent %d", keycodeSleep)); err != nil {
			return err
		}
		awake, _, err := d.screenState(ctx)
		if err != nil {
			return err
		}
		if awake {
			return fmt.Errorf("the screen is still on after KEYCODE_SLEEP")
		}
		return nil
	})
}

// Unlock wakes the screen and dismisses a keyguard that has no PIN
// (KEYCODE_MENU, then `wm dismiss-keyguard`). A secure lock screen is
// reported: Apex does not enter PINs.
func (d *Driver) Unlock(ctx context.Context) error {
	return d.call(ctx, "unlock", true, d.opts.Timeout, func(ctx context.Context) error {
		steps := []string{
			fmt.Sprintf("input keyevent %d", keycodeWakeup),
			fmt.Sprintf("input keyevent %d", keycodeMenu),
			"wm dismiss-keyguard",
		}
		for i, step := range steps {
			awake, locked, err := d.screenState(ctx)
			if err != nil {
				return err
			}
			if awake && !locked {
				return nil
			}
			if i > 0 && !awake {
				return fmt.Errorf("the screen stays off after KEYCODE_WAKEUP")
			}
			if _, err := d.shell(ctx, step); err != nil {
				return err
			}
		}
		awake, locked, err := d.screenState(ctx)
		switch {
		case err != nil:
			return err
		case !awake:
			return fmt.Errorf("the screen stays off after KEYCODE_WAKEUP")
		case locked:
			return fmt.Errorf("the lock screen stays up: it is probably secured with a PIN, pattern or password; unlock the phone by hand: %w", device.ErrUnsupported)
		}
		return nil
	})
}
