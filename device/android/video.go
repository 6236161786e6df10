package android

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/device"
)

var (
	_ device.H264Recorder  = (*Driver)(nil)
	_ device.FrameStreamer = (*Driver)(nil)
)

// recordArgs is the screenrecord command line of o.
func recordArgs(o device.RecordOptions, format string) string {
	var b strings.Builder
	b.WriteString("screenrecord --output-format=" + format)
	if o.Width > 0 && o.Height > 0 {
		fmt.Fprintf(&b, " --size %dx%d", o.Width, o.Height)
	}
	if o.BitRate > 0 {
		fmt.Fprintf(&b, " --bit-rate %d", o.BitRate)
	}
	if o.TimeLimit > 0 {
		fmt.Fprintf(&b, " --time-limit %d", o.TimeLimit)
	}
	return b.String() + " -"
}

// ScreenRecordH264 streams the screen as H.264 (Annex B) to w: `screenrecord
// --output-format=h264 … -`, started again at once whenever it stops at its
// time limit, so the stream goes on (each run begins with its parameter
// sets and an IDR picture). It returns ctx's error when ctx ends, or
// screenrecord's own message when it fails (no encoder, a size the
// device refuses).
func (d *Driver) ScreenRecordH264(ctx context.Context, o device.RecordOptions, w io.Writer) error {
	return d.record(ctx, o, "h264", w, nil)
}

// ScreenFrames streams the screen as raw frames of width×height (0: the
// display's size), a frame each time the screen changes:
// `screenrecord --output-format=raw-frames`, RGB888 pixels, restarted at
// its time limit like ScreenRecordH264. each gets a frame it may keep
// until it returns.
func (d *Driver) ScreenFrames(ctx context.Context, width, height int, each func(*image.RGBA) error) error {
	if width <= 0 || height <= 0 {
		return errors.New("android: screen frames: give the frames' size")
	}
	fw := &frameWriter{each: each}
	return d.record(ctx, device.RecordOptions{Width: width, Height: height}, "raw-frames", fw, fw.resize)
}

// record runs screenrecord again each time it ends well (its time limit,
// or a rotation of the display on the simulated phone) until ctx ends or
// it fails. A size in o is the natural (portrait) orientation's: each
// run turns it to the display's rotation at its start, and starts with
// that size (nil: no one asks).
func (d *Driver) record(ctx context.Context, o device.RecordOptions, format string, w io.Writer, starts func(w, h int)) error {
	for {
		run := o
		if run.Width > 0 && run.Height > 0 && d.rotation(ctx)%2 == 1 {
			run.Width, run.Height = run.Height, run.Width
		}
		if starts != nil {
			starts(run.Width, run.Height)
		}
		cmd := recordArgs(run, format)
		var stderr bytes.Buffer
		cw := &countWriter{w: w}
		began := time.Now()
		code, err := adb.RunShell(ctx, d.t, cmd, adb.ShellOptions{Stdout: cw, Stderr: &stderr})
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, adb.ErrGone):
			return d.offline("screenrecord", err)
		case err != nil:
			return fmt.Errorf("android %s: %s: %w", d.serial, cmd, err)
		case code != 0 || (cw.n == 0 && time.Since(began) < time.Second):
			// A run that ends at once having written nothing failed,
			// whatever its status; one that reached its time limit on a
			// still screen (or a busy device) did not.
			msg := strings.TrimSpace(stderr.String())
			if msg == "" {
				msg = fmt.Sprintf("exit status %d, %d bytes written", code, cw.n)
			}
			return fmt.Errorf("android %s: %s: %s", d.serial, cmd, msg)
		}
		d.log.Debug("screenrecord ended (its time limit, a rotation): recording on", "serial", d.serial)
	}
}

// rotation is the display's rotation in quarter turns (0 when the device
// does not say).
func (d *Driver) rotation(ctx context.Context) int {
	out, err := d.shell(ctx, "dumpsys input 2>/dev/null | grep SurfaceOrientation")
	if err != nil {
		return 0
	}
	if m := rotationRe().FindStringSubmatch(out); m != nil {
		return int(m[1][0] - '0')
	}
	return 0
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// frameWriter cuts RGB888 bytes into frames.
type frameWriter struct {
	mu   sync.Mutex
	img  *image.RGBA
	rgb  []byte
	each func(*image.RGBA) error
}

// resize starts a run of w×h frames.
func (f *frameWriter) resize(w, h int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.img == nil || f.img.Rect.Dx() != w || f.img.Rect.Dy() != h {
		f.img = image.NewRGBA(image.Rect(0, 0, w, h))
		f.rgb = make([]byte, 0, w*h*3)
	}
	f.rgb = f.rgb[:0]
}

func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(p)
	size := cap(f.rgb)
	for len(p) > 0 {
		take := min(size-len(f.rgb), len(p))
		f.rgb = append(f.rgb, p[:take]...)
		p = p[take:]
		if len(f.rgb) < size {
			break
		}
		pix := f.img.Pix
		for i, j := 0, 0; j < size; i, j = i+4, j+3 {
			pix[i], pix[i+1], pix[i+2], pix[i+3] = f.rgb[j], f.rgb[j+1], f.rgb[j+2], 255
		}
		f.rgb = f.rgb[:0]
		if err := f.each(f.img); err != nil {
			return 0, err
		}
	}
	return n, nil
}
