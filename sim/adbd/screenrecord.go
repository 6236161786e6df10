package adbd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apexagent/apex/internal/supervise"
	"github.com/apexagent/apex/internal/tail"
	"github.com/apexagent/apex/video/frame"
	"github.com/apexagent/apex/video/h264"
)

// ScreenWatcher is a phone that says when its screen changes
// (sim.Phone): screenrecord sends a frame at each change instead of
// polling.
type ScreenWatcher interface {
	ScreenChanged() <-chan struct{}
}

// FrameDrawer is a phone that draws its screen into an image it is given
// (sim.Phone), so a recording reuses one frame.
type FrameDrawer interface {
	FrameInto(dst *image.RGBA) *image.RGBA
}

// recording is what `screenrecord` was asked for.
type recording struct {
	format  string // "h264" or "raw-frames"
	w, h    int
	bitRate int
	limit   time.Duration
}

const (
	defaultBitRate = 20_000_000 // screenrecord's default, 20 Mbps
	maxFrameRate   = 60         // a phone's display refresh
	// lookEvery is how often a recording looks at a screen that reported
	// no change: changes that come with time alone show only when looked
	// at.
	lookEvery = time.Second
)

// cmdScreenrecord is `screenrecord [--size WxH] [--bit-rate N]
// [--time-limit SEC] --output-format=h264|raw-frames -`: the screen as a
// live stream on stdout, a frame whenever it changes, until the time
// limit (180 s by default, as on a phone) or the display rotates (a
// reader starts another at the new orientation, not stretched). H.264 is encoded by ffmpeg with
// libx264, a supervised subprocess restarted if it dies; raw-frames are
// RGB888 pixels, width×height×3 bytes a frame. MP4 files are not
// recorded.
func cmdScreenrecord(ctx context.Context, c *Cmd) int {
	rec, code, ok := parseScreenrecord(c)
	if !ok {
		return code
	}
	switch rec.format {
	case "raw-frames":
		return c.recordRaw(ctx, rec)
	case "h264":
		return c.recordH264(ctx, rec)
	}
	return c.fail(1, "this simulated phone records only a live stream to stdout: use --output-format=h264 (needs ffmpeg) or --output-format=raw-frames with the file name -")
}

func parseScreenrecord(c *Cmd) (recording, int, bool) {
	w, h, _ := c.phone().Display()
	if r := c.phone().Rotation(); r == 1 || r == 3 {
		w, h = h, w
	}
	rec := recording{format: "mp4", w: w, h: h, bitRate: defaultBitRate, limit: 180 * time.Second}
	var files []string
	a := c.Args[1:]
	for i := 0; i < len(a); i++ {
		name, val, hasVal := strings.Cut(a[i], "=")
		if !strings.HasPrefix(name, "--") || name == "-" {
			files = append(files, a[i])
			continue
		}
		needs := map[string]bool{"--size": true, "--bit-rate": true, "--time-limit": true, "--output-format": true, "--display-id": true}
		if needs[name] && !hasVal {
			if i+1 >= len(a) {
				return rec, c.fail(2, "option %s needs a value", name), false
			}
			i++
			val = a[i]
		}
		switch name {
		case "--help":
			c.printf("Usage: screenrecord [options] <filename>\n\nAndroid screenrecord v1.3.  Records the device's display to a .mp4 file.\n\nOptions:\n--size WIDTHxHEIGHT\n--bit-rate RATE\n--time-limit TIME\n--output-format FORMAT (h264, raw-frames; this simulated phone writes them to stdout only)\n")
			return rec, 0, false
		case "--size":
			sw, sh, ok := strings.Cut(val, "x")
			wi, err1 := strconv.Atoi(sw)
			hi, err2 := strconv.Atoi(sh)
			if !ok || err1 != nil || err2 != nil || wi < 2 || hi < 2 || wi > 4096 || hi > 4096 || wi%2 != 0 || hi%2 != 0 {
				return rec, c.fail(1, "Invalid size '%s', must be width x height with even sides up to 4096", val), false
			}
			rec.w, rec.h = wi, hi
		case "--bit-rate":
			n, err := parseRate(val)
			if err != nil || n < 100_000 || n > 200_000_000 {
				return rec, c.fail(1, "Invalid bit rate '%s': use 100000 to 200000000 (or 4M)", val), false
			}
			rec.bitRate = n
		case "--time-limit":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 1800 {
				return rec, c.fail(1, "Time limit %s must be 1 to 1800 seconds", val), false
			}
			rec.limit = time.Duration(n) * time.Second
		case "--output-format":
			rec.format = val
		case "--display-id":
			if val != "0" {
				return rec, c.fail(1, "no display %s; the simulated phone has display 0", val), false
			}
		case "--verbose", "--bugreport":
		default:
			return rec, c.fail(2, "Unknown option '%s'", name), false
		}
	}
	if len(files) != 1 {
		return rec, c.fail(2, "must specify one output file (- for stdout)"), false
	}
	if files[0] != "-" && rec.format != "mp4" {
		return rec, c.fail(1, "this simulated phone writes %s to stdout only: give - as the file name", rec.format), false
	}
	return rec, 0, true
}

func parseRate(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "M"):
		mult, s = 1_000_000, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "K"), strings.HasSuffix(s, "k"):
		mult, s = 1_000, s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	return n * mult, err
}

// frames calls each with the screen as convert turns it into the
// recording's bytes (scaled to its size): now, then at every change (at
// most maxFrameRate a second), until the time limit or a rotation of the
// display (nil), ctx's end or each's error. A send on again sends the
// current frame even when it did not change. The bytes each gets are
// reused for the next frame.
func (c *Cmd) frames(ctx context.Context, rec recording, again <-chan struct{}, convert func(dst []byte, img *image.RGBA) []byte, each func([]byte) error) error {
	ph := c.phone()
	watcher, _ := ph.(ScreenWatcher)
	drawer, _ := ph.(FrameDrawer)
	var full *image.RGBA // the frame drawn, when drawer reuses it
	limit := time.NewTimer(rec.limit)
	defer limit.Stop()
	look := time.NewTicker(lookEvery)
	defer look.Stop()
	gap := time.NewTimer(0)
	defer gap.Stop()
	sent := false // since the last wait for the gap
	var out, last []byte
	force := true
	rotation := ph.Rotation()
	for {
		if ph.Rotation() != rotation {
			// The frames' size no longer fits the screen: end the run,
			// and the reader starts one at the new orientation.
			return nil
		}
		var changed <-chan struct{}
		var err error
		if watcher != nil {
			changed = watcher.ScreenChanged() // before the frame: a change during it is not lost
		}
		drawn := time.Now()
		var img *image.RGBA
		if drawer != nil {
			full = drawer.FrameInto(full)
			img = full
		} else if img, err = ph.Frame(); err != nil {
			return err
		}
		drawing := time.Since(drawn)
		out = convert(out, img)
		if force || !bytes.Equal(out, last) {
			if err := each(out); err != nil {
				return err
			}
			out, last = last, out
			// Drawing takes the phone's lock: leave at least as long
			// again to its input and screenshots. Sending the frame
			// (converting it, the encoder, the link) does not hold the
			// lock and runs in the gap.
			gap.Reset(max(time.Second/maxFrameRate, 2*drawing) - time.Since(drawn))
			sent = true
		}
		force = false
		select {
		case <-changed:
		case <-look.C:
		case <-again:
			force = true
		case <-limit.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
		if sent { // no faster than the display refreshes
			select {
			case <-gap.C:
			case <-ctx.Done():
				return ctx.Err()
			}
			sent = false
		}
	}
}

func (c *Cmd) flush() error {
	if f, ok := c.Stdout.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// recordRaw is --output-format=raw-frames: RGB888 frames back to back.
func (c *Cmd) recordRaw(ctx context.Context, rec recording) int {
	var scaled *image.RGBA
	rgb888 := func(dst []byte, img *image.RGBA) []byte {
		if scaled == img {
			scaled = nil
		}
		scaled = frame.Scale(scaled, img, rec.w, rec.h)
		if n := rec.w * rec.h * 3; cap(dst) < n {
			dst = make([]byte, n)
		}
		dst = dst[:rec.w*rec.h*3]
		for i, j := 0, 0; j < len(dst); i, j = i+4, j+3 {
			dst[j], dst[j+1], dst[j+2] = scaled.Pix[i], scaled.Pix[i+1], scaled.Pix[i+2]
		}
		return dst
	}
	err := c.frames(ctx, rec, nil, rgb888, func(rgb []byte) error {
		if _, err := c.Stdout.Write(rgb); err != nil {
			return err
		}
		return c.flush()
	})
	return c.recordEnd(err)
}

func (c *Cmd) recordEnd(err error) int {
	if err == nil || errors.Is(err, context.Canceled) {
		return 0
	}
	if errors.Is(err, errOutputGone) {
		return 1
	}
	return c.fail(1, "%v", err)
}

var errOutputGone = errors.New("the output was closed")

// Encoder finds the H.264 encoder `screenrecord` uses: ffmpeg with
// libx264 (Options.Encoder).
func (s *Server) Encoder() (string, error) {
	name := s.opts.Encoder
	if name == "none" {
		return "", errors.New("no H.264 encoder: install ffmpeg")
	}
	if name == "" {
		name = "ffmpeg"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("no H.264 encoder: install ffmpeg (apt-get install ffmpeg): %w", err)
	}
	return path, nil
}

// aud is an access unit delimiter, written after each picture so a reader
// knows at once that the picture is complete.
var aud = []byte{0, 0, 0, 1, h264.TypeAUD, 0xf0}

// recordH264 is --output-format=h264: the frames piped as yuv420p
// through ffmpeg's libx264 (baseline, no B-frames, ultrafast, zero
// latency), which runs supervised: if it dies it is started again and
// the stream goes on from a new IDR picture. Each access unit is written
// whole, followed by a delimiter.
func (c *Cmd) recordH264(ctx context.Context, rec recording) int {
	ffmpeg, err := c.s.Encoder()
	if err != nil {
		return c.fail(1, "%v", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var in io.WriteCloser // the running encoder's stdin
	var outErr error
	again := make(chan struct{}, 1)
	args := []string{"-hide_banner", "-loglevel", "error", "-nostdin",
		"-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", fmt.Sprintf("%dx%d", rec.w, rec.h), "-framerate", strconv.Itoa(maxFrameRate), "-i", "pipe:0",
		"-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-profile:v", "baseline", "-bf", "0",
		"-b:v", strconv.Itoa(rec.bitRate), "-g", strconv.Itoa(2 * maxFrameRate), "-threads", "2",
		"-f", "h264", "-flush_packets", "1", "pipe:1"}
	encode := func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, ffmpeg, args...)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		stderr := tail.New(4096) // ffmpeg says what went wrong last
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		mu.Lock()
		in = stdin
		mu.Unlock()
		select { // a new encoder starts from the current screen
		case again <- struct{}{}:
		default:
		}
		err = h264.Stream(ctx, stdout, 5*time.Millisecond, func(au h264.AccessUnit) error {
			b := append(au.AnnexB(), aud...)
			if _, err := c.Stdout.Write(b); err != nil {
				return err
			}
			return c.flush()
		})
		mu.Lock()
		in = nil
		mu.Unlock()
		stdin.Close()
		if err != nil && ctx.Err() == nil {
			// The reader is gone: stop recording, not the encoder alone.
			mu.Lock()
			outErr = err
			mu.Unlock()
			cancel()
		}
		werr := cmd.Wait()
		if said := stderr.String(); werr != nil && said != "" {
			werr = fmt.Errorf("%w: %s", werr, said)
		}
		return werr
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = supervise.Run(ctx, supervise.Options{Name: "screenrecord's H.264 encoder (ffmpeg)", Log: c.s.log, OnEvent: c.s.opts.OnSupervise}, encode)
	}()
	// ffmpeg takes the planes libx264 encodes, scaled and converted here
	// in one pass: a third of RGBA's bytes through the pipe, and no pixel
	// conversion in ffmpeg.
	yuv420p := func(dst []byte, img *image.RGBA) []byte { return frame.ScaleI420(dst, img, rec.w, rec.h) }
	err = c.frames(ctx, rec, again, yuv420p, func(yuv []byte) error {
		mu.Lock()
		w := in
		mu.Unlock()
		if w != nil {
			// A failed write is an encoder that died: the supervisor
			// starts another, which asks for the frame again.
			_, _ = w.Write(yuv)
		}
		return nil
	})
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if outErr != nil {
		return 1
	}
	return c.recordEnd(err)
}
