package server

import (
	"crypto/rand"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestRecorderMemoryBounded: 1,200 recorded actions with two 200 KB
// frames each (480 MB in all) keep memory flat — the frames go to disk,
// up to the bound — and a new recording, or Close, removes them.
func TestRecorderMemoryBounded(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	rc := &recorder{limits: Limits{}.withDefaults(), log: slog.New(slog.DiscardHandler)}
	rc.limits.RecorderFrames = 64 << 20
	rc.on = true
	frame := make([]byte, 200<<10)
	rand.Read(frame)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for range 1200 {
		rc.add(Recorded{Action: "Tap", Params: []byte(`{"locate":"Settings"}`)}, frame, frame)
	}
	grown := int64(heap()) - int64(before)
	if grown > 16<<20 {
		t.Errorf("1,200 recorded actions grew the heap by %d MB; want under 16 MB (frames on disk)", grown>>20)
	}
	evs := rc.list()
	if len(evs) != 1200 || evs[0].beforeFile == "" || evs[1199].beforeFile != "" {
		t.Fatalf("%d actions, first frame %q, last %q: want 1200, the first kept, the last past the bound", len(evs), evs[0].beforeFile, evs[1199].beforeFile)
	}
	if evs[1199].Before != "" || evs[1199].ScreenshotAsset != nil {
		t.Errorf("an action without frames points to some: %q %v", evs[1199].Before, evs[1199].ScreenshotAsset)
	}
	if onDisk := dirSize(t, rc.dir); onDisk > rc.limits.RecorderFrames || onDisk < rc.limits.RecorderFrames/2 {
		t.Errorf("%d bytes of frames on disk, want up to the bound of %d", onDisk, rc.limits.RecorderFrames)
	}
	if fi, err := os.Stat(rc.dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("frames directory %v %v, want mode 0700", fi, err)
	}
	if rc.framesNote() == "" {
		t.Error("no note says frames were left out")
	}
	dir := rc.dir
	rc.mu.Lock()
	rc.resetLocked() // a new recording
	rc.mu.Unlock()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the last recording's frames are still on disk after a new start: %v", err)
	}
	rc.add(Recorded{Action: "Tap"}, frame, nil)
	dir = rc.dir
	rc.close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("frames still on disk after Close: %v", err)
	}
}

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
