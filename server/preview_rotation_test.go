package server_test

import (
	"context"
	"image"
	"image/jpeg"
	"strings"
	"testing"
	"time"

	"github.com/apexagent/apex/internal/patience"
	"github.com/coder/websocket"

	"github.com/apexagent/apex/video/h264"
)

// TestPreviewFollowsRotation turns the simulated phone to landscape while
// a viewer watches, for each transport: the frames that follow are
// landscape (half of 2400×1080), not the portrait size stretched, and
// the H.264 stream sends a new config first.
func TestPreviewFollowsRotation(t *testing.T) {
	for _, tc := range []struct {
		name string
		// frames calls each with the size of every frame the viewer gets
		// until each returns false.
		frames func(t *testing.T, p *phone, each func(w, h int) bool)
	}{
		{"mjpeg", func(t *testing.T, p *phone, each func(w, h int) bool) {
			mr := p.mjpeg()
			for {
				part, err := mr.NextPart()
				if err != nil {
					t.Fatal(err)
				}
				c, err := jpeg.DecodeConfig(part)
				if err != nil {
					t.Fatal(err)
				}
				if !each(c.Width, c.Height) {
					return
				}
			}
		}},
		{"h264", func(t *testing.T, p *phone, each func(w, h int) bool) {
			if _, err := p.dev.Server().Encoder(); err != nil {
				t.Skipf("%v: the simulated phone cannot encode H.264 here", err)
			}
			ctx, c := p.h264(t)
			for {
				_, msg, err := c.Read(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if msg[0] != 1 { // frames follow their config
					continue
				}
				cfg, err := h264.ParseRecord(msg[2+int(msg[1]):])
				if err != nil {
					t.Fatal(err)
				}
				w, h, err := cfg.Size()
				if err != nil {
					t.Fatal(err)
				}
				if !each(w, h) {
					return
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPhone(t, nil)
			p.ready()
			w, h, _ := p.dev.Phone.Display()
			portrait, landscape := image.Pt(w/2, h/2), image.Pt(h/2, w/2)
			changeScreen(t, p) // the screen keeps changing: frames keep coming
			var rotated time.Time
			tc.frames(t, p, func(w, h int) bool {
				got := image.Pt(w, h)
				switch {
				case rotated.IsZero():
					if got != portrait {
						t.Fatalf("the first frame is %v, want %v", got, portrait)
					}
					if err := p.dev.Phone.SetRotation(1); err != nil {
						t.Fatal(err)
					}
					rotated = time.Now()
				case got == landscape:
					return false
				case got != portrait:
					t.Fatalf("after the rotation a frame is %v: neither %v nor %v", got, portrait, landscape)
				case time.Since(rotated) > patience.Of(30*time.Second):
					t.Fatalf("%v after the rotation the frames are still %v", patience.Of(30*time.Second), got)
				}
				return true
			})
		})
	}
}

// h264 follows GET /preview/h264 until the test ends (at most 2 minutes,
// stretched by patience).
func (p *phone) h264(t *testing.T) (context.Context, *websocket.Conn) {
	t.Helper()
	ctx := patience.Context(t, 2*time.Minute)
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(p.http.URL, "http")+"/preview/h264", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	c.SetReadLimit(16 << 20)
	return ctx, c
}
