package server_test

import (
	"bytes"
	"fmt"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/server"
)

func TestScreenshot(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	code, data := p.raw("GET", "/screenshot", nil, nil)
	if code != 200 {
		t.Fatalf("screenshot: %d %s", code, data)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	w, h, _ := p.dev.Phone.Display()
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("screenshot is %v, the phone %dx%d", b, w, h)
	}
}

// TestMJPEG reads frames while a task runs, and sees the stream end with
// the session (which cancels the task).
func TestMJPEG(t *testing.T) {
	p := startPhone(t, &phoneOptions{opts: server.Options{Resend: 50 * time.Millisecond}})
	p.ready()
	id := p.mustDo(202, "POST", "/execute", map[string]any{"goal": longGoal, "async": true})["requestId"].(string)

	mr := p.mjpeg()
	w, h, _ := p.dev.Phone.Display()
	if h > 1280 {
		w, h = w/2, h/2 // the preview halves tall screens
	}
	const frames = 5
	for i := range frames {
		part, err := mr.NextPart()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if ct := part.Header.Get("Content-Type"); ct != "image/jpeg" {
			t.Errorf("frame %d Content-Type %q", i, ct)
		}
		img, err := jpeg.Decode(part)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
			t.Errorf("frame %d is %v, want %dx%d", i, b, w, h)
		}
	}
	if v := p.mustDo(200, "GET", "/task-progress/"+id, nil); v["status"] != "running" {
		t.Errorf("the task ended while frames were read: %v", v["status"])
	}

	p.mustDo(200, "DELETE", "/session", nil)
	if v := p.mustDo(200, "GET", "/task-progress/"+id, nil); v["status"] != "canceled" {
		t.Errorf("task after DELETE /session: %v, want canceled", v["status"])
	}
	// The stream ends: parts already buffered may still come, then EOF.
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after DELETE /session the stream broke: %v", err)
		}
		_, _ = io.Copy(io.Discard, part)
	}
}

func TestSafety(t *testing.T) {
	p := startPhone(t, nil)
	host := strings.TrimPrefix(p.http.URL, "http://")
	for _, tc := range []struct {
		origin string
		code   int
	}{
		{"http://evil.example", 403},
		{"http://" + host + ".evil.example", 403},
		{"null", 403},
		{"http://" + host, 200},
		{"", 200},
	} {
		hdr := http.Header{}
		if tc.origin != "" {
			hdr.Set("Origin", tc.origin)
		}
		code, body := p.raw("POST", "/session", map[string]string{}, hdr)
		if code != tc.code {
			t.Errorf("POST /session from origin %q: %d %s, want %d", tc.origin, code, body, tc.code)
		}
		if code == 200 {
			p.mustDo(200, "DELETE", "/session", nil)
		}
	}
	// A cross-origin page may still read (GET is harmless and a browser
	// hides the answer from it without CORS headers).
	if code, _ := p.raw("GET", "/status", nil, http.Header{"Origin": {"http://evil.example"}}); code != 200 {
		t.Errorf("GET /status with a foreign origin: %d", code)
	}

	for host, want := range map[string]int{"evil.example": 403, "evil.example:" + port(p): 403, "10.0.0.1:" + port(p): 403,
		"localhost:" + port(p): 200, "127.0.0.1:" + port(p): 200, "[::1]:" + port(p): 200} {
		req, _ := http.NewRequestWithContext(testCtx(t), "GET", p.http.URL+"/status", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET /status with Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}

	big := io.MultiReader(strings.NewReader(`{"goal": "`), io.LimitReader(zeros{}, server.MaxBody+1), strings.NewReader(`"}`))
	req, _ := http.NewRequestWithContext(testCtx(t), "POST", p.http.URL+"/execute", big)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("a body over %d bytes: %d, want 413", server.MaxBody, resp.StatusCode)
	}
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = 'a'
	}
	return len(b), nil
}

func port(p *phone) string { return p.http.URL[strings.LastIndex(p.http.URL, ":")+1:] }

// TestPreviewViewerLimit: past Limits.Viewers live previews, a new one of
// any transport is turned away with 503 and Retry-After, and a place
// freed by a viewer who left is taken again.
func TestPreviewViewerLimit(t *testing.T) {
	p := startPhone(t, &phoneOptions{opts: server.Options{Limits: server.Limits{Viewers: 2}}})
	p.ready()
	first := p.stream("/mjpeg")
	p.stream("/mjpeg?size=full")
	offer := map[string]string{"type": "offer", "sdp": "v=0\r\n"}
	for _, c := range []struct {
		method, path string
		body         any
	}{{"GET", "/mjpeg", nil}, {"GET", "/preview/h264", nil}, {"POST", "/preview/webrtc", offer}} {
		code, data := p.raw(c.method, c.path, c.body, nil)
		if code != http.StatusServiceUnavailable || !strings.Contains(string(data), "2 live previews already stream") {
			t.Errorf("%s %s with 2 viewers streaming: %d %s, want 503 naming the limit", c.method, c.path, code, data)
		}
	}
	resp := p.stream("/mjpeg")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a third MJPEG viewer: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	first.Body.Close()
	patience.Poll(t, 10*time.Second, func() error {
		resp := p.stream("/mjpeg")
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("a viewer left, yet a new one is answered %d", resp.StatusCode)
		}
		return nil
	})
}
