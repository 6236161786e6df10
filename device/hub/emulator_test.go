package hub_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apexagent/apex/device/hub"
	"github.com/google/go-cmp/cmp"
)

// TestDetectEmulator: an SDK whose emulator lists AVDs is found; no SDK,
// or an emulator without AVDs, says what to install.
func TestDetectEmulator(t *testing.T) {
	sdk := t.TempDir()
	bin := filepath.Join(sdk, "emulator", "emulator")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(script string) {
		if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	t.Setenv("PATH", t.TempDir()) // no emulator on $PATH

	write("echo 'INFO    | Storing crashdata in: /tmp'\necho Pixel_7_API_34\necho Tablet\n")
	e, err := hub.DetectEmulator(ctx(t), env(map[string]string{"ANDROID_HOME": sdk}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hub.Emulator{Path: bin, AVDs: []string{"Pixel_7_API_34", "Tablet"}}, e); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	write("true\n")
	if _, err := hub.DetectEmulator(ctx(t), env(map[string]string{"ANDROID_SDK_ROOT": sdk})); !errors.Is(err, hub.ErrNoEmulator) {
		t.Errorf("an emulator without AVDs: %v; want ErrNoEmulator", err)
	}
	if _, err := hub.DetectEmulator(ctx(t), env(nil)); !errors.Is(err, hub.ErrNoEmulator) {
		t.Errorf("no SDK: %v; want ErrNoEmulator", err)
	}
}
