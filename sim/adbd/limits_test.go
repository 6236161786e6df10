package adbd

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/sim/adbd/adbdtest"
)

// TestPushBounds: adb push of a file over the phone's bound on one file,
// or one that would pass the bound on all files, fails with a message
// that names the bounds; within them it works, and removing files frees
// their room.
func TestPushBounds(t *testing.T) {
	adb := adbdtest.Start(t)
	srv, addr := serve(t, newFakePhone(), nil)
	srv.FS().SetLimits(2<<20, 3<<20)
	serial := adb.Connect(addr)
	dir := t.TempDir()
	blob := func(name string, size int) string {
		data := make([]byte, size)
		rand.Read(data)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big, a, b := blob("big.bin", 5<<20), blob("a.bin", 2<<20), blob("b.bin", 2<<20)
	cases := []struct {
		name, file, want string
	}{
		{"one file over the file bound", big, "No space left on device: the simulated phone keeps files of at most 2097152 bytes, 3145728 in all"},
		{"within the bounds", a, ""},
		{"over the bound on all files", b, "No space left on device"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, err := adb.Run("-s", serial, "push", c.file, "/sdcard/Download/")
			said := string(stdout) + string(stderr) // adb writes the device's FAIL on stdout
			if c.want == "" {
				if err != nil {
					t.Fatalf("push: %v %s", err, stderr)
				}
				return
			}
			if err == nil || !strings.Contains(said, c.want) {
				t.Fatalf("push: err %v, output %q; want it refused saying %q", err, said, c.want)
			}
			if _, err := srv.FS().Stat("/sdcard/Download/" + filepath.Base(c.file)); err == nil {
				t.Error("the refused file exists on the phone")
			}
		})
	}
	adb.Must("-s", serial, "shell", "rm", "/sdcard/Download/a.bin")
	adb.Must("-s", serial, "push", b, "/sdcard/Download/")
}

// TestShellStringsBounded: scripts that grow a string without end stop at
// MaxShellStrings with a message saying so, instead of taking the
// machine's memory.
func TestShellStringsBounded(t *testing.T) {
	s := NewServer(newFakePhone(), nil)
	defer s.Close()
	for name, script := range map[string]string{
		"a doubling variable":      "x=a; while :; do x=$x$x; done",
		"an endless substitution":  "l=a; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do l=$l$l; done; x=$(while :; do echo $l; done)",
		"a doubling array element": "a=(x); while :; do a[0]=${a[0]}${a[0]}; done",
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, stderr, code := sh(t, s, script)
			if code == 0 || !strings.Contains(stderr, "passed the simulated phone's bound of 16777216 bytes") {
				t.Fatalf("exit %d, stderr %q; want it stopped at the bound", code, stderr)
			}
			t.Logf("stopped after %v", time.Since(start))
		})
	}
}
