package wda_test

import (
	"bufio"
	"bytes"
	"image/jpeg"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strconv"
	"strings"
	"testing"

	"github.com/apexagent/apex/sim/wda"
)

// visible says whether an element named or labelled name is on screen.
func (r *rig) visible(prefix, name string) bool {
	r.t.Helper()
	var ids []map[string]string
	r.ok("POST", prefix+"/elements", map[string]string{"using": "predicate string", "value": "name == '" + name + "' OR label == '" + name + "'"}).decode(r.t, &ids)
	return len(ids) > 0
}

// The element gestures of WebDriverAgent: swipe and scroll a list, pinch
// an image, on the simulated iPhone.
func TestElementGestures(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.apex.notes"})
	list := r.find(s, "accessibility id", "notes")
	if !r.visible(s, "Groceries 1") {
		t.Fatal("the first note is not on screen at the start")
	}
	r.ok("POST", s+"/wda/element/"+list+"/swipe", map[string]any{"direction": "up"})
	if r.visible(s, "Groceries 1") {
		t.Error("swipe up on the list left the first note on screen")
	}
	r.ok("POST", s+"/wda/element/"+list+"/swipe", map[string]any{"direction": "down", "velocity": 2500})
	r.ok("POST", s+"/wda/element/"+list+"/scroll", map[string]any{"direction": "up", "distance": 3})
	if !r.visible(s, "Groceries 1") {
		t.Error("swipe and scroll back up did not bring the first note back")
	}
	r.ok("POST", s+"/wda/element/"+list+"/scroll", map[string]any{"predicateString": "label == 'Garden 2'"})
	if !r.visible(s, "Garden 2") {
		t.Error("scroll to a predicate did not show it")
	}
	r.ok("POST", s+"/wda/element/"+list+"/scroll", map[string]any{"predicateString": "label == 'Groceries 1'"})
	if !r.visible(s, "Groceries 1") {
		t.Error("scroll to a predicate did not show it")
	}
	rep := r.do("POST", s+"/wda/element/"+list+"/scroll", map[string]any{"name": "No such note"})
	if rep.Status != http.StatusNotFound || !strings.Contains(rep.message(), "max scroll count") {
		t.Errorf("scroll to a missing name: %d %s", rep.Status, rep.raw)
	}

	r.ok("POST", s+"/url", map[string]any{"url": "https://example.com/map"})
	page := r.find(s, "accessibility id", "page_view")
	for _, tt := range []struct {
		scale, velocity float64
		want            float64
	}{{3, 2, 3}, {0.5, -1, 1.5}} {
		r.ok("POST", s+"/wda/element/"+page+"/pinch", map[string]any{"scale": tt.scale, "velocity": tt.velocity})
		if st, _ := r.phone.State("com.android.browser"); st["zoom"] != tt.want {
			t.Errorf("pinch scale %g: zoom %v, want %v", tt.scale, st["zoom"], tt.want)
		}
	}
	if rep := r.do("POST", s+"/wda/element/"+page+"/pinch", map[string]any{"scale": 2, "velocity": -1}); rep.Status != http.StatusBadRequest {
		t.Errorf("a zoom in at a negative velocity: %d %s", rep.Status, rep.raw)
	}
}

// Appium's touch actions: one finger (tap, press–wait–moveTo–release), and
// two that pinch.
func TestTouchPerform(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]any{"bundleId": "com.apex.notes"})
	r.ok("POST", s+"/wda/touch/perform", map[string]any{"actions": []any{
		map[string]any{"action": "press", "options": map[string]any{"x": 195, "y": 600}},
		map[string]any{"action": "wait", "options": map[string]any{"ms": 200}},
		map[string]any{"action": "moveTo", "options": map[string]any{"x": 195, "y": 200}},
		map[string]any{"action": "release", "options": map[string]any{}},
	}})
	if r.visible(s, "Groceries 1") {
		t.Error("press, moveTo up, release did not scroll the list")
	}
	row := r.find(s, "xpath", "(//XCUIElementTypeCell)[2]") // the first is half under the bar
	r.ok("POST", s+"/wda/touch/perform", map[string]any{"actions": []any{
		map[string]any{"action": "tap", "options": map[string]any{"element": row}},
	}})
	if r.visible(s, "notes") {
		t.Error("a tap on a note did not open it")
	}
	if rep := r.do("POST", s+"/wda/touch/perform", map[string]any{"actions": []any{map[string]any{"action": "wiggle"}}}); rep.Status != http.StatusBadRequest {
		t.Errorf("an unknown touch action: %d %s", rep.Status, rep.raw)
	}

	r.ok("POST", s+"/url", map[string]any{"url": "https://example.com/map"})
	page := r.find(s, "accessibility id", "page_view")
	finger := func(dx float64) []any {
		return []any{
			map[string]any{"action": "press", "options": map[string]any{"element": page, "x": 195 - dx, "y": 100}},
			map[string]any{"action": "moveTo", "options": map[string]any{"element": page, "x": 195 - 4*dx, "y": 100}},
			map[string]any{"action": "release"},
		}
	}
	r.ok("POST", s+"/wda/touch/multi/perform", map[string]any{"actions": []any{finger(20), finger(-20)}})
	if st, _ := r.phone.State("com.android.browser"); st["zoom"] != 4.0 {
		t.Errorf("two fingers spreading fourfold: zoom %v, want 4", st["zoom"])
	}
}

// The MJPEG server streams JPEG frames of the screen on its own port and
// sends a new one when the screen changes; /appium/settings tells its
// port and sets its scaling.
func TestMJPEGServer(t *testing.T) {
	r := newRig(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	srv := wda.NewServer(r.phone, &wda.Options{MJPEGPort: port})
	go srv.ServeMJPEG(ln)
	t.Cleanup(func() { srv.Close() })
	r.srv = httptest.NewServer(srv)
	t.Cleanup(r.srv.Close)
	var settings map[string]any
	r.ok("GET", "/appium/settings", nil).decode(t, &settings)
	if settings["mjpegServerPort"] != float64(port) {
		t.Errorf("mjpegServerPort = %v, want %d", settings["mjpegServerPort"], port)
	}
	r.ok("POST", "/appium/settings", map[string]any{"settings": map[string]any{"mjpegScalingFactor": 50, "mjpegServerFramerate": 30}})
	if rep := r.do("POST", "/appium/settings", map[string]any{"settings": map[string]any{"mjpegServerPort": 1}}); rep.Status != http.StatusBadRequest {
		t.Errorf("moving the MJPEG port: %d %s, want 400", rep.Status, rep.raw)
	}

	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/x-mixed-replace" {
		t.Fatalf("content type %q (%v)", resp.Header.Get("Content-Type"), err)
	}
	// Each part says its length, so a frame is read without waiting for the
	// next boundary (which comes with the next change of the screen).
	br := bufio.NewReader(resp.Body)
	frame := func() []byte {
		t.Helper()
		tp := textproto.NewReader(br)
		if line, err := tp.ReadLine(); err != nil || line != params["boundary"] {
			t.Fatalf("part starts %q (%v), want the boundary %q", line, err, params["boundary"])
		}
		h, err := tp.ReadMIMEHeader()
		if err != nil || h.Get("Content-Type") != "image/jpeg" {
			t.Fatalf("part header %v (%v)", h, err)
		}
		n, _ := strconv.Atoi(h.Get("Content-Length"))
		buf := make([]byte, n+4)
		if _, err := io.ReadFull(br, buf); err != nil || string(buf[n:]) != "\r\n\r\n" {
			t.Fatalf("frame of %d bytes: %v", n, err)
		}
		buf = buf[:n]
		img, err := jpeg.Decode(bytes.NewReader(buf))
		if err != nil {
			t.Fatalf("a frame is not a JPEG: %v", err)
		}
		if b := img.Bounds(); b.Dx() != 585 || b.Dy() != 1266 {
			t.Errorf("frame %v, want half of 1170x2532", b)
		}
		return buf
	}
	first := frame()
	r.ok("POST", "/wda/apps/launch", map[string]any{"bundleId": "com.apex.notes"})
	if bytes.Equal(first, frame()) {
		t.Error("the frame after launching Notes is the frame before")
	}
}
