package hub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Emulator is the Android SDK's emulator on this machine and its virtual
// devices (AVDs), each of which it can boot.
type Emulator struct {
	Path string   `json:"path"`
	AVDs []string `json:"avds"`
}

// ErrNoEmulator is the error of DetectEmulator on a machine without the
// SDK's emulator or without an AVD.
var ErrNoEmulator = errors.New("no Android emulator")

// DetectEmulator finds the SDK's emulator ($ANDROID_HOME/emulator,
// $ANDROID_SDK_ROOT/emulator, then $PATH) and lists its AVDs with
// `emulator -list-avds`. Emulators are optional: the error says what to
// install when there is none.
func DetectEmulator(ctx context.Context, getenv func(string) string) (Emulator, error) {
	var path string
	for _, root := range []string{getenv("ANDROID_HOME"), getenv("ANDROID_SDK_ROOT")} {
		if root == "" {
			continue
		}
		p := filepath.Join(root, "emulator", "emulator")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			path = p
			break
		}
	}
	if path == "" {
		p, err := exec.LookPath("emulator")
		if err != nil {
			return Emulator{}, fmt.Errorf("%w: the SDK's emulator is not in $ANDROID_HOME/emulator nor on $PATH: install it with sdkmanager emulator to boot Android emulators", ErrNoEmulator)
		}
		path = p
	}
	out, err := exec.CommandContext(ctx, path, "-list-avds").Output()
	if err != nil {
		return Emulator{Path: path}, fmt.Errorf("%w: %s -list-avds: %v", ErrNoEmulator, path, err)
	}
	e := Emulator{Path: path}
	for _, l := range strings.Split(string(out), "\n") {
		// The emulator prints INFO lines to stdout too.
		if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, " ") {
			e.AVDs = append(e.AVDs, l)
		}
	}
	if len(e.AVDs) == 0 {
		return e, fmt.Errorf("%w: %s has no AVDs: create one with avdmanager create avd", ErrNoEmulator, path)
	}
	return e, nil
}
