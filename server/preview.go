package server

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/apexagent/apex/device"
)

// previewMaxLong bounds the long side of preview frames by default (a
// portrait phone's height, a rotated one's width): a phone's full
// resolution costs four times the encoding (and the bandwidth) for no
// gain in a browser panel; ?size=full asks for it. Clients map points by
// the device's size in /runtime-info, not the frame's. /screenshot stays
// full size.
const previewMaxLong = 1280

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
// session does. One producer serves every viewer of a size, and encodes
// each frame once for all of them. ?size=full asks for the screen's own
// size; the default halves a screen longer than previewMaxLong.
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
	leave := s.watch(w)
	if leave == nil {
		return
	}
	defer leave()
	size := previewSize(r)
	f := s.preview.join(s, size)
	defer s.preview.leave(size)
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
