package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"
	"sync"
	"time"

	"github.com/apexagent/apex/device"
)

// previewMaxHeight bounds the height of MJPEG frames: a phone's full
// resolution costs four times the encoding (and the bandwidth) for no gain
// in a browser panel. Clients map points by the device's size in
// /runtime-info, not the frame's. /screenshot stays full size.
const previewMaxHeight = 1280

// jpegQuality trades the preview's sharpness for its size.
const jpegQuality = 80

func (s *Server) screenshot(w http.ResponseWriter, r *http.Request) {
	dev, err := s.sess.open(false)
	if err != nil {
		writeError(w, 0, err)
		return
	}
	img, err := dev.drv.Screenshot(r.Context())
	if errors.Is(err, device.ErrOffline) {
		s.relinkAnswer(w, r, dev, "screenshot", err)
		return
	}
	if err != nil {
		writeError(w, http.StatusBadGateway, fmt.Errorf("screenshot of %s: %w", dev.target.ID, err))
		return
	}
	if wantsJSONScreenshot(r) {
		writeJSON(w, http.StatusOK, map[string]any{"screenshot": "data:image/png;base64," + base64.StdEncoding.EncodeToString(img),
			"timestamp": time.Now().UnixMilli()})
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(img)
}

const mjpegBoundary = "apexframe"

// mjpeg streams the screen as multipart JPEG frames: a frame when the
// screen changes, and the last one again after Resend of silence, since a
// browser draws a part only once the next one starts. It ends when the
// session does. One producer serves every viewer.
func (s *Server) mjpeg(w http.ResponseWriter, r *http.Request) {
	if _, err := s.sess.open(false); err != nil {
		writeError(w, 0, err)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("streaming is not supported here"))
		return
	}
	f := s.preview.join(s)
	defer s.preview.leave()
	h := w.Header()
	h.Set("Content-Type", "multipart/x-mixed-replace; boundary="+mjpegBoundary)
	h.Set("Cache-Control", "no-cache, no-store, no-transform")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	resend := time.NewTimer(s.opts.Resend)
	defer resend.Stop()
	sent := 0
	for {
		frame, seq, changed, ended := f.latest()
		if ended {
			// The closing delimiter tells the client the stream ended on
			// purpose (the session did), not by a broken link.
			_, _ = fmt.Fprintf(w, "--%s--\r\n", mjpegBoundary)
			return
		}
		if seq != sent && frame != nil {
			if writeFrame(w, frame) != nil {
				return
			}
			fl.Flush()
			sent = seq
			resend.Reset(s.opts.Resend)
		}
		select {
		case <-changed:
		case <-resend.C:
			if frame != nil {
				if writeFrame(w, frame) != nil {
					return
				}
				fl.Flush()
			}
			resend.Reset(s.opts.Resend)
		case <-r.Context().Done():
			return
		}
	}
}

func writeFrame(w http.ResponseWriter, jpg []byte) error {
	if _, err := fmt.Fprintf(w, "--%s\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n", mjpegBoundary, len(jpg)); err != nil {
		return err
	}
	if _, err := w.Write(jpg); err != nil {
		return err
	}
	_, err := w.Write([]byte("\r\n"))
	return err
}

// previewHub runs one frame producer while anyone watches.
type previewHub struct {
	mu      sync.Mutex
	viewers int
	feed    *feed
	stop    context.CancelFunc
}

func (h *previewHub) join(s *Server) *feed {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.viewers++
	if h.feed == nil || h.feed.isEnded() {
		ctx, stop := context.WithCancel(context.Background())
		h.feed, h.stop = newFeed(), stop
		go s.produce(ctx, h.feed)
	}
	return h.feed
}

func (h *previewHub) leave() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.viewers--
	if h.viewers == 0 && h.feed != nil {
		h.stop()
		h.feed = nil
	}
}

// feed is one producer's frames.
type feed struct {
	mu      sync.Mutex
	frame   []byte // JPEG
	seq     int
	changed chan struct{} // closed at the next frame or the end
	ended   bool
}

func newFeed() *feed { return &feed{changed: make(chan struct{})} }

func (f *feed) latest() ([]byte, int, <-chan struct{}, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frame, f.seq, f.changed, f.ended
}

func (f *feed) isEnded() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ended
}

func (f *feed) set(jpg []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frame, f.seq = jpg, f.seq+1
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *feed) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.ended {
		f.ended = true
		close(f.changed)
	}
}

// produce polls the session's screen every FrameInterval and publishes a
// JPEG when it changed, until ctx ends or the session does. A failed
// screenshot is retried at the next tick; a broken device link is opened
// again, and the stream goes on with the new link's frames.
func (s *Server) produce(ctx context.Context, f *feed) {
	defer f.end()
	tick := time.NewTicker(s.opts.FrameInterval)
	defer tick.Stop()
	var last []byte
	for {
		dev, err := s.sess.open(false)
		if err != nil && !errors.Is(err, errRecreating) {
			return
		}
		var shot []byte
		if err == nil {
			shot, err = dev.drv.Screenshot(ctx)
		}
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errRecreating):
		case errors.Is(err, device.ErrOffline):
			s.log.Warn("preview: the device link broke: reopening", "device", dev.target.ID, "err", err)
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), linkCheckTimeout)
			_ = s.relink(rctx, dev.drv)
			cancel()
		case err != nil:
			s.log.Debug("preview screenshot", "device", dev.target.ID, "err", err)
		case !bytes.Equal(shot, last):
			jpg, err := toJPEG(shot)
			if err != nil {
				s.log.Warn("preview frame", "device", dev.target.ID, "err", err)
				break
			}
			last = shot
			f.set(jpg)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

func toJPEG(pngData []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		return nil, fmt.Errorf("decode screenshot: %w", err)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, shrink(img), &jpeg.Options{Quality: jpegQuality}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// shrink halves an image taller than previewMaxHeight, averaging each 2×2
// block. Screenshots are opaque, so RGBA and NRGBA pixels read alike.
func shrink(img image.Image) image.Image {
	var pix []byte
	var stride int
	switch m := img.(type) {
	case *image.RGBA:
		pix, stride = m.Pix, m.Stride
	case *image.NRGBA:
		pix, stride = m.Pix, m.Stride
	default:
		return img
	}
	b := img.Bounds()
	if b.Dy() <= previewMaxHeight {
		return img
	}
	w, h := b.Dx()/2, b.Dy()/2
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		r0, r1 := pix[2*y*stride:], pix[(2*y+1)*stride:]
		d := dst.Pix[y*dst.Stride:]
		for x := range w {
			i := 8 * x
			for c := range 3 {
				sum := uint(r0[i+c]) + uint(r0[i+4+c]) + uint(r1[i+c]) + uint(r1[i+4+c])
				d[4*x+c] = uint8((sum + 2) / 4)
			}
			d[4*x+3] = 255
		}
	}
	return dst
}
