package android_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/internal/labtest"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/internal/proctest"
	"github.com/apexagent/apex/sim/lab"
	"github.com/apexagent/apex/video/h264"
)

// TestScreenFrames: the simulated phone pushes a frame at once, then one
// at each change of the screen, at the size asked.
func TestScreenFrames(t *testing.T) {
	dev, d := labtest.Android(t, lab.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	frames := make(chan []byte, 64)
	errc := make(chan error, 1)
	rctx, stop := context.WithCancel(ctx)
	go func() {
		errc <- d.ScreenFrames(rctx, 540, 1200, func(img *image.RGBA) error {
			if b := img.Bounds(); b.Dx() != 540 || b.Dy() != 1200 {
				t.Errorf("frame of %v, want 540×1200", b)
			}
			frames <- bytes.Clone(img.Pix)
			return nil
		})
	}()
	first := next(t, frames, errc)
	if err := dev.Phone.Launch("com.apex.shop"); err != nil {
		t.Fatal(err)
	}
	var changed []byte
	for changed == nil || bytes.Equal(changed, first) {
		changed = next(t, frames, errc)
	}
	stop()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("ScreenFrames after cancel: %v", err)
	}
}

func next(t *testing.T, frames chan []byte, errc chan error) []byte {
	t.Helper()
	select {
	case f := <-frames:
		return f
	case err := <-errc:
		t.Fatalf("ScreenFrames ended: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no frame in 20s")
	}
	return nil
}

// TestScreenRecordH264 records the simulated phone through ffmpeg, across
// screenrecord's time limit: each run begins with parameter sets and an
// IDR picture, and the stream goes on.
func TestScreenRecordH264(t *testing.T) {
	dev, d := labtest.Android(t, lab.Options{})
	if _, err := dev.Server().Encoder(); err != nil {
		t.Skipf("%v: the simulated phone cannot encode H.264 here", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := d.ScreenRecordH264(ctx, device.RecordOptions{Width: 540, Height: 1200, BitRate: 2_000_000, TimeLimit: 2}, pw)
		pw.CloseWithError(err)
		errc <- err
	}()
	keys, pics := 0, 0
	launched := false
	err := h264.Stream(ctx, pr, 20*time.Millisecond, func(au h264.AccessUnit) error {
		pics++
		if pics == 1 && (!au.Key() || au.Find(h264.TypeSPS) == nil || au.Find(h264.TypePPS) == nil) {
			t.Errorf("the first access unit is not an IDR picture with its parameter sets")
		}
		if au.Key() {
			keys++
		}
		if !launched {
			launched = true
			return dev.Phone.Launch("com.apex.shop")
		}
		if keys >= 2 { // two runs of screenrecord, one after the other
			return io.EOF
		}
		return nil
	})
	cancel()
	if err != io.EOF {
		t.Fatalf("the stream ended after %d pictures (%d key): %v", pics, keys, err)
	}
	pr.Close()
	if err := <-errc; !errors.Is(err, context.Canceled) && !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("ScreenRecordH264 = %v", err)
	}
}

// TestScreenRecordNoEncoder: without ffmpeg the simulated phone says what
// to install, and the driver passes its words on.
func TestScreenRecordNoEncoder(t *testing.T) {
	_, d := labtest.Android(t, lab.Options{Encoder: "none"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := d.ScreenRecordH264(ctx, device.RecordOptions{}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "screenrecord: no H.264 encoder: install ffmpeg") {
		t.Errorf("ScreenRecordH264 without an encoder = %v, want screenrecord's words", err)
	}
}

// TestScreenRecordH264SurvivesEncoderKill: the simulated phone's ffmpeg is
// supervised; killed with SIGKILL, it is started again and the stream goes
// on with a new IDR picture, while screenrecord itself never stops.
func TestScreenRecordH264SurvivesEncoderKill(t *testing.T) {
	dev, d := labtest.Android(t, lab.Options{})
	if _, err := dev.Server().Encoder(); err != nil {
		t.Skipf("%v: the simulated phone cannot encode H.264 here", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(d.ScreenRecordH264(ctx, device.RecordOptions{Width: 540, Height: 1200}, pw))
	}()
	var killed time.Time
	var pid int
	err := h264.Stream(ctx, pr, 20*time.Millisecond, func(au h264.AccessUnit) error {
		switch {
		case killed.IsZero():
			pid = ffmpegChild(t)
			killed = time.Now()
			return syscall.Kill(pid, syscall.SIGKILL)
		case au.Key() && au.Find(h264.TypeSPS) != nil:
			if after := time.Since(killed); after > patience.Of(5*time.Second) {
				t.Errorf("the stream came back %v after ffmpeg (pid %d) was killed", after, pid)
			}
			if again := ffmpegChild(t); again == pid {
				t.Errorf("the same ffmpeg %d after the kill", pid)
			}
			return io.EOF
		}
		return nil
	})
	if err != io.EOF {
		t.Fatalf("the stream ended: %v", err)
	}
}

// ffmpegChild is the pid of this process's ffmpeg child.
func ffmpegChild(t *testing.T) int {
	t.Helper()
	return proctest.Wait(t, "ffmpeg", func(p proctest.Proc) bool { return p.Name == "ffmpeg" }).PID
}
