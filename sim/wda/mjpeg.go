package wda

import (
	"bytes"
	"errors"
	"fmt"
	"image/jpeg"
	"image/png"
	"net"
	"net/http"
	"time"

	"github.com/apexagent/apex/internal/httpguard"
	"github.com/apexagent/apex/video/frame"
)

// DefaultMJPEGPort is the port WebDriverAgent's MJPEG server listens on
// unless told otherwise (its MJPEG_SERVER_PORT).
const DefaultMJPEGPort = 9100

// mjpegBoundary is the part boundary WebDriverAgent's stream uses.
const mjpegBoundary = "--BoundaryString"

// ServeMJPEG streams the screen on ln until Close, as WebDriverAgent's
// MJPEG server does on its own port: any GET is answered with
// multipart/x-mixed-replace JPEG frames, one when the stream opens and one
// each time the screen changes, at most mjpegServerFramerate a second, at
// mjpegServerScreenshotQuality and scaled by mjpegScalingFactor (the
// /appium/settings of the WebDriverAgent server, which reports
// Options.MJPEGPort as mjpegServerPort). It returns nil after Close.
func (s *Server) ServeMJPEG(ln net.Listener) error {
	s.mu.Lock()
	if s.mjpeg == nil {
		s.mjpeg = httpguard.NewServer(http.HandlerFunc(s.streamMJPEG), nil)
	}
	hs := s.mjpeg
	s.mu.Unlock()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("wda: serve MJPEG: %w", err)
	}
	return nil
}

// mjpegOptions reads the stream's settings, kept within what WebDriverAgent
// accepts.
func (s *Server) mjpegOptions() (fps, quality, scale int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	get := func(name string, lo, hi int) int {
		v, ok := s.appium[name].(float64)
		if !ok {
			return defaultSettings[name].(int)
		}
		return min(max(int(v), lo), hi)
	}
	return get("mjpegServerFramerate", 1, 60), get("mjpegServerScreenshotQuality", 1, 100), get("mjpegScalingFactor", 1, 100)
}

func (s *Server) streamMJPEG(w http.ResponseWriter, r *http.Request) {
	if err := httpguard.CheckRequest(r, httpguard.AddressHost(r.Host), "the simulated WebDriverAgent's MJPEG server", "use its address"); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	httpguard.Admit(r)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "the MJPEG server answers GET", http.StatusMethodNotAllowed)
		return
	}
	h := w.Header()
	h.Set("Server", "WDA MJPEG Server")
	h.Set("Cache-Control", "no-cache, private")
	h.Set("Pragma", "no-cache")
	h.Set("Content-Type", "multipart/x-mixed-replace; boundary="+mjpegBoundary)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	rc := http.NewResponseController(w)
	var last []byte
	for {
		fps, quality, scale := s.mjpegOptions()
		shot, err := s.phone.Screenshot()
		if err == nil && !bytes.Equal(shot, last) {
			frame, err := jpegFrame(shot, quality, scale)
			if err != nil {
				s.log.Error("wda: MJPEG frame", "err", err)
				return
			}
			if _, err := fmt.Fprintf(w, "%s\r\nContent-type: image/jpeg\r\nContent-Length: %d\r\n\r\n", mjpegBoundary, len(frame)); err != nil {
				return
			}
			if _, err := w.Write(append(frame, "\r\n\r\n"...)); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
			last = shot
		}
		t := time.NewTimer(time.Second / time.Duration(fps))
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// jpegFrame re-encodes a PNG screenshot as a JPEG of the given quality,
// scaled to scale percent.
func jpegFrame(shot []byte, quality, scale int) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		return nil, err
	}
	if scale < 100 {
		b := img.Bounds()
		img = frame.Scale(nil, frame.RGBA(img), max(1, b.Dx()*scale/100), max(1, b.Dy()*scale/100))
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
