package wda

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/draw"
	"image/png"
	"maps"
	"time"

	"github.com/apexagent/apex/sim"
)

// orientations are WebDriverAgent's names of the interface orientations,
// by the phone's rotation.
var orientations = []string{"PORTRAIT", "LANDSCAPE", "UIA_DEVICE_ORIENTATION_PORTRAIT_UPSIDEDOWN", "UIA_DEVICE_ORIENTATION_LANDSCAPERIGHT"}

func (s *Server) orientation(*request) (any, error) {
	return orientations[s.phone.Rotation()], nil
}

func (s *Server) setOrientation(q *request) (any, error) {
	o, err := q.str("orientation")
	if err != nil {
		return nil, err
	}
	for r, name := range orientations {
		if name == o || (o == "LANDSCAPELEFT" && r == 1) || (o == "LANDSCAPERIGHT" && r == 3) {
			return nil, s.phone.SetRotation(r)
		}
	}
	return nil, errInvalidArgument("Unable To Rotate Device: unknown orientation %q (PORTRAIT, LANDSCAPE)", o)
}

func (s *Server) rotation(*request) (any, error) {
	return map[string]int{"x": 0, "y": 0, "z": 90 * s.phone.Rotation()}, nil
}

func (s *Server) setRotation(q *request) (any, error) {
	z, err := q.num("z")
	if err != nil {
		return nil, err
	}
	if x, _ := q.optNum("x", 0); x != 0 || int(z)%90 != 0 || z < 0 || z >= 360 {
		return nil, errInvalidArgument("Unable To Rotate Device: rotation {x: 0, y: 0, z: 0|90|180|270} only")
	}
	return nil, s.phone.SetRotation(int(z) / 90)
}

// timeouts accepts the W3C timeouts; implicit waits are the client's to
// do against the simulated phone, which answers at once.
func (s *Server) timeouts(q *request) (any, error) {
	for _, k := range []string{"implicit", "pageLoad", "script"} {
		if _, err := q.optNum(k, 0); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// defaultSettings are the Appium settings WebDriverAgent reports.
var defaultSettings = map[string]any{"snapshotMaxDepth": 50, "mjpegServerFramerate": 10, "mjpegServerScreenshotQuality": 25,
	"mjpegScalingFactor": 100, "screenshotQuality": 1, "elementResponseAttributes": "type,label",
	"shouldUseCompactResponses": true, "boundElementsByIndex": false, "reduceMotion": false,
	"defaultActiveApplication": "auto", "keyboardAutocorrection": false, "keyboardPrediction": false}

func (s *Server) settings(q *request) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := maps.Clone(defaultSettings)
	maps.Copy(out, s.appium)
	if s.mjpegPort != 0 {
		out["mjpegServerPort"] = s.mjpegPort
	}
	return out, nil
}

func (s *Server) updateSettings(q *request) (any, error) {
	var v map[string]any
	if raw, ok := q.body["settings"]; !ok || json.Unmarshal(raw, &v) != nil || v == nil {
		return nil, errInvalidArgument("'settings' must be an object")
	}
	s.mu.Lock()
	port := s.mjpegPort
	s.mu.Unlock()
	if p, ok := v["mjpegServerPort"]; ok && p != float64(port) {
		return nil, errInvalidArgument("mjpegServerPort is %d, fixed when WebDriverAgent starts (its MJPEG_SERVER_PORT): read it, do not set it", port)
	}
	delete(v, "mjpegServerPort")
	s.mu.Lock()
	maps.Copy(s.appium, v)
	s.mu.Unlock()
	return s.settings(q)
}

func (s *Server) setPasteboard(q *request) (any, error) {
	c, err := q.str("content")
	if err != nil {
		return nil, err
	}
	if t, _ := q.optStr("contentType"); t != "" && t != "plaintext" {
		return nil, errInvalidArgument("Unsupported content type: %s (the simulated pasteboard holds plaintext)", t)
	}
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		return nil, errInvalidArgument("'content' must be base64: %v", err)
	}
	s.mu.Lock()
	s.pasteboard = string(b)
	s.mu.Unlock()
	return nil, nil
}

func (s *Server) getPasteboard(q *request) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return base64.StdEncoding.EncodeToString([]byte(s.pasteboard)), nil
}

// appsList lists the running apps with their process ids.
func (s *Server) appsList(*request) (any, error) {
	out := []map[string]any{}
	for _, p := range s.phone.Packages() {
		if st := s.phone.AppStatus(p.Name); st.Running && p.Name != sim.Launcher {
			out = append(out, map[string]any{"pid": st.PID, "bundleId": p.Name})
		}
	}
	return out, nil
}

// openURL opens a URL as Safari would: the app that opens its scheme.
func (s *Server) openURL(q *request) (any, error) {
	u, err := q.str("url")
	if err != nil {
		return nil, err
	}
	if _, err := s.phone.View(u); err != nil {
		return nil, errUnknown("Cannot open %s: %v", u, err)
	}
	return nil, nil
}

// deactivateApp sends the app to the background for duration seconds
// (default 3) and brings it back, answering when it is back.
func (s *Server) deactivateApp(q *request) (any, error) {
	d, err := q.seconds("duration", 3)
	if err != nil {
		return nil, err
	}
	b := s.bundleOnScreen()
	s.phone.KeyEvent(sim.KeycodeHome)
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-q.r.Context().Done():
			return nil, errUnknown("deactivateApp: the client went away")
		}
	}
	if b != sim.SpringBoard {
		return nil, s.launch(b)
	}
	return nil, nil
}

// elementScreenshot is the screenshot cropped to the element's frame.
func (s *Server) elementScreenshot(q *request) (any, error) {
	e, err := s.element(q, q.params["uuid"])
	if err != nil {
		return nil, err
	}
	frame, err := s.phone.Frame()
	if err != nil {
		return nil, errUnknown("screenshot: %v", err)
	}
	sc := s.scale()
	r := image.Rect(e.Rect.Min.X*sc, e.Rect.Min.Y*sc, e.Rect.Max.X*sc, e.Rect.Max.Y*sc).Intersect(frame.Bounds())
	if r.Empty() {
		return nil, errUnknown("the element is off screen: nothing to capture")
	}
	crop := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(crop, crop.Bounds(), frame, r.Min, draw.Src)
	var buf bytes.Buffer
	if err := png.Encode(&buf, crop); err != nil {
		return nil, errUnknown("screenshot: %v", err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}
