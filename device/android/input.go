package android

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/apexagent/apex/device"
)

// Android key codes (android.view.KeyEvent).
var keycodes = map[device.Key]int{
	device.KeyHome: 3, device.KeyBack: 4, device.KeyEnter: 66, device.KeyDelete: 67,
	device.KeyRecents: 187, device.KeyAppSwitch: 187, device.KeyVolumeUp: 24,
	device.KeyVolumeDown: 25, device.KeyPower: 26, device.KeyTab: 61, device.KeyEscape: 111,
	device.KeySpace: 62, device.KeyUp: 19, device.KeyDown: 20, device.KeyLeft: 21,
	device.KeyRight: 22, device.KeySearch: 84, device.KeyMenu: 82,
}

const (
	keycodeMenu   = 82
	keycodeSleep  = 223
	keycodeWakeup = 224
)

// Keycode returns the Android key code of k.
func Keycode(k device.Key) (int, error) {
	code, ok := keycodes[k]
	if !ok {
		return 0, fmt.Errorf("key %q has no Android key code: %w", k, device.ErrUnsupported)
	}
	return code, nil
}

// input runs one `input …` command line. Input is not idempotent: a
// command that may have reached the device is not repeated.
func (d *Driver) input(ctx context.Context, op, cmd string) error {
	return d.call(ctx, op, false, d.opts.Timeout, func(ctx context.Context) error {
		_, err := d.shell(ctx, cmd)
		return err
	})
}

// Tap taps a point.
func (d *Driver) Tap(ctx context.Context, p device.Point) error {
	return d.input(ctx, "tap", fmt.Sprintf("input tap %d %d", p.X, p.Y))
}

// LongPress holds a point for dur (a same-point swipe, as Android does it).
func (d *Driver) LongPress(ctx context.Context, p device.Point, dur time.Duration) error {
	if dur <= 0 {
		dur = time.Second
	}
	return d.input(ctx, "long press", fmt.Sprintf("input swipe %d %d %d %d %d", p.X, p.Y, p.X, p.Y, dur.Milliseconds()))
}

// Swipe moves from one point to another over dur.
func (d *Driver) Swipe(ctx context.Context, from, to device.Point, dur time.Duration) error {
	if dur <= 0 {
		dur = 300 * time.Millisecond
	}
	return d.input(ctx, "swipe", fmt.Sprintf("input swipe %d %d %d %d %d", from.X, from.Y, to.X, to.Y, dur.Milliseconds()))
}

// PressKey sends a key event.
func (d *Driver) PressKey(ctx context.Context, k device.Key) error {
	code, err := Keycode(k)
	if err != nil {
		return err
	}
	return d.input(ctx, "press "+string(k), fmt.Sprintf("input keyevent %d", code))
}

// InputText types text into the focused field. ASCII goes through `input
// text`; any other text through the ADBKeyBoard IME's broadcast, which
// must be installed (the error says how).
func (d *Driver) InputText(ctx context.Context, text string) error {
	if text == "" {
		return nil
	}
	cmd, err := inputTextCommand(text)
	if err != nil {
		return fmt.Errorf("android %s: input text: %w", d.serial, err)
	}
	if cmd != "" {
		return d.input(ctx, "input text", cmd)
	}
	ok, err := d.hasADBKeyboard(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("android %s: typing %q needs the ADBKeyBoard IME (Android's `input text` is ASCII only): install it with `adb install ADBKeyboard.apk` from github.com/senzhk/ADBKeyBoard, then retry: %w", d.serial, text, device.ErrUnsupported)
	}
	return d.input(ctx, "input text", adbKeyboardCommand(text))
}

const adbKeyboardIME = "com.android.adbkeyboard/.AdbIME"

// adbKeyboardCommand selects the ADBKeyBoard IME if another one is
// active, broadcasts the text, and puts the previous IME back.
func adbKeyboardCommand(text string) string {
	b64 := base64.StdEncoding.EncodeToString([]byte(text))
	return `prev=$(settings get secure default_input_method); ` +
		`if [ "$prev" != "` + adbKeyboardIME + `" ]; then ime enable ` + adbKeyboardIME + ` >/dev/null; ime set ` + adbKeyboardIME + ` >/dev/null; fi; ` +
		`am broadcast -a ADB_INPUT_B64 --es msg ` + b64 + ` >/dev/null; rc=$?; ` +
		`if [ -n "$prev" ] && [ "$prev" != "null" ] && [ "$prev" != "` + adbKeyboardIME + `" ]; then ime set "$prev" >/dev/null; fi; exit $rc`
}

func (d *Driver) hasADBKeyboard(ctx context.Context) (bool, error) {
	d.mu.Lock()
	known := d.adbIME
	d.mu.Unlock()
	if known != nil {
		return *known, nil
	}
	var has bool
	err := d.call(ctx, "check ADBKeyBoard", true, d.opts.Timeout, func(ctx context.Context) error {
		out, err := d.shell(ctx, "pm list packages com.android.adbkeyboard")
		has = strings.Contains(out, "package:com.android.adbkeyboard")
		return err
	})
	if err != nil {
		return false, err
	}
	d.mu.Lock()
	d.adbIME = &has
	d.mu.Unlock()
	return has, nil
}

// inputTextCommand builds the shell line that types ASCII text, or ""
// when the text needs the IME. Spaces become %s (input's own escape), a
// literal "%s" is split across two commands so input cannot mistake it,
// newlines and tabs become key events, and every argument is single-quoted
// for the shell.
func inputTextCommand(text string) (string, error) {
	var cmds []string
	var run strings.Builder
	flush := func() {
		if run.Len() == 0 {
			return
		}
		for i, piece := range strings.Split(run.String(), "%s") {
			if i > 0 {
				piece = "s" + piece
			}
			if i < strings.Count(run.String(), "%s") {
				piece += "%"
			}
			if piece != "" {
				cmds = append(cmds, "input text "+quote(strings.ReplaceAll(piece, " ", "%s")))
			}
		}
		run.Reset()
	}
	for _, r := range text {
		switch {
		case r == '\n':
			flush()
			cmds = append(cmds, "input keyevent 66")
		case r == '\t':
			flush()
			cmds = append(cmds, "input keyevent 61")
		case r > 0x7e:
			return "", nil
		case r < 0x20 || r == 0x7f:
			return "", fmt.Errorf("cannot type control character %U", r)
		default:
			run.WriteRune(r)
		}
	}
	flush()
	return strings.Join(cmds, " && "), nil
}
