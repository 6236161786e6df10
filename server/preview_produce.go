package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/video/frame"
)

// maxPollInterval is the slowest the preview polls a device whose screen
// stays still.
const maxPollInterval = time.Second

// produce publishes JPEG frames of the session's screen into f until ctx
// ends or the session does. A device that pushes frames is streamed;
// another is polled every FrameInterval while its screen changes, less
// and less often (down to maxPollInterval) while it stays still. Each
// frame is encoded once, whoever watches. A broken device link is opened
// again, and the stream goes on with the new link's frames.
func (s *Server) produce(ctx context.Context, f *feed, full bool) {
	defer f.end()
	polled := map[device.Driver]bool{} // drivers whose frame stream failed
	var last []byte                    // the last screenshot polled
	interval := s.opts.FrameInterval
	for {
		dev, err := s.sess.open(false)
		if err != nil && !errors.Is(err, errRecreating) {
			return
		}
		if err == nil {
			if fs, ok := dev.drv.(device.FrameStreamer); ok && !polled[dev.drv] {
				err := s.pushFrames(ctx, f, dev, fs, full)
				switch {
				case ctx.Err() != nil:
					return
				case errors.Is(err, device.ErrOffline):
					s.previewRelink(ctx, dev, err)
				default:
					s.log.Info("preview: the device pushes no frames: polling its screen", "device", dev.target.ID, "err", err)
					polled[dev.drv] = true
				}
				continue
			}
			var changed bool
			changed, last, err = s.pollOnce(ctx, f, dev, last, full)
			switch {
			case ctx.Err() != nil:
				return
			case errors.Is(err, device.ErrOffline):
				s.previewRelink(ctx, dev, err)
			case err != nil:
				s.log.Debug("preview screenshot", "device", dev.target.ID, "err", err)
			}
			if changed {
				interval = s.opts.FrameInterval
			} else {
				interval = min(interval*3/2, maxPollInterval)
			}
		}
		t := time.NewTimer(interval)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}

func (s *Server) previewRelink(ctx context.Context, dev sessionDevice, err error) {
	s.log.Warn("preview: the device link broke: reopening", "device", dev.target.ID, "err", err)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), linkCheckTimeout)
	_ = s.relink(rctx, dev.drv)
	cancel()
}

// pushFrames publishes the frames the device pushes, until its stream
// fails. Frames are encoded on a goroutine of their own, one frame
// behind: the device draws the next frame while this one is encoded, and
// waits while one is already waiting, so no CPU goes to frames nobody
// will see.
func (s *Server) pushFrames(ctx context.Context, f *feed, dev sessionDevice, fs device.FrameStreamer, full bool) error {
	w, h, err := previewDims(ctx, dev, full)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	frames := make(chan *image.RGBA, 1) // copied, to encode
	free := make(chan *image.RGBA, 2)   // encoded, to reuse
	done := make(chan struct{})
	defer func() { cancel(); <-done }() // the encoder ends with the stream
	go func() {
		defer close(done)
		var buf bytes.Buffer
		for {
			select {
			case img := <-frames:
				buf.Reset()
				if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: jpegQuality}); err == nil {
					f.set(bytes.Clone(buf.Bytes()))
				}
				free <- img
			case <-ctx.Done():
				return
			}
		}
	}()
	allocated := 0
	return fs.ScreenFrames(ctx, w, h, func(img *image.RGBA) error {
		var dst *image.RGBA
		select {
		case dst = <-free:
		default:
			if allocated < cap(free) {
				allocated++
			} else {
				select { // both buffers are taken: wait for one
				case dst = <-free:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		if dst == nil || dst.Rect != img.Rect {
			dst = image.NewRGBA(img.Rect)
		}
		copy(dst.Pix, img.Pix)
		select {
		case frames <- dst:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

// pollOnce takes a screenshot and publishes it when it differs from last.
func (s *Server) pollOnce(ctx context.Context, f *feed, dev sessionDevice, last []byte, full bool) (bool, []byte, error) {
	shot, err := dev.drv.Screenshot(ctx)
	if err != nil || bytes.Equal(shot, last) {
		return false, last, err
	}
	jpg, err := toJPEG(shot, full)
	if err != nil {
		return false, last, fmt.Errorf("preview frame: %w", err)
	}
	f.set(jpg)
	return true, shot, nil
}

// previewDims is the size of the device's preview frames.
func previewDims(ctx context.Context, dev sessionDevice, full bool) (int, int, error) {
	size := screenSize(ctx, dev)
	if size == nil {
		return 0, 0, fmt.Errorf("the size of %s's screen is unknown", dev.target.ID)
	}
	w, h := size["width"].(int), size["height"].(int)
	if full {
		return w &^ 1, h &^ 1, nil
	}
	w, h = frame.Size(w, h, previewMaxLong)
	return w, h, nil
}

func toJPEG(pngData []byte, full bool) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		return nil, fmt.Errorf("decode screenshot: %w", err)
	}
	rgba := frame.RGBA(img)
	if b := rgba.Bounds(); !full {
		w, h := frame.Size(b.Dx(), b.Dy(), previewMaxLong)
		rgba = frame.Scale(nil, rgba, w, h)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, rgba, &jpeg.Options{Quality: jpegQuality}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
