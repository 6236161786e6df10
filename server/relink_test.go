package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/jpeg"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/internal/patience"
	"github.com/apexagent/apex/server"
)

// brokenLink is a device link whose taps and device checks fail as
// offline once broken, and whose next failShots screenshots fail.
type brokenLink struct {
	device.Driver
	broken    *atomic.Bool
	taps      *atomic.Int32
	failShots *atomic.Int32
}

func (b brokenLink) Info(ctx context.Context) (device.Info, error) {
	if b.broken.Load() {
		return device.Info{}, fmt.Errorf("info: %w", device.ErrOffline)
	}
	return b.Driver.Info(ctx)
}

func (b brokenLink) Screenshot(ctx context.Context) ([]byte, error) {
	if b.failShots != nil && b.failShots.Add(-1) >= 0 {
		return nil, fmt.Errorf("screencap: %w", device.ErrOffline)
	}
	return b.Driver.Screenshot(ctx)
}

func (b brokenLink) Tap(ctx context.Context, p device.Point) error {
	if b.broken.Load() {
		return fmt.Errorf("tap: %w", device.ErrOffline)
	}
	b.taps.Add(1)
	return b.Driver.Tap(ctx, p)
}

func TestInteractRelinksABrokenLink(t *testing.T) {
	var broken atomic.Bool
	var taps, opens atomic.Int32
	var reopenFails atomic.Bool
	p := startPhone(t, &phoneOptions{open: func(ctx context.Context, id string, real func() (device.Driver, device.Target, func(), error)) (device.Driver, device.Target, func(), error) {
		if opens.Add(1) > 1 && reopenFails.Load() {
			return nil, device.Target{}, nil, errors.New("the phone is gone")
		}
		d, tg, release, err := real()
		if err != nil {
			return nil, tg, nil, err
		}
		return brokenLink{d, &broken, &taps, nil}, tg, release, nil
	}})
	p.ready()
	tap := map[string]any{"action": "Tap", "params": map[string]any{"locate": "Settings"}}

	broken.Store(true)
	code, m := p.do("POST", "/interact", tap)
	if code != 503 || m["retry"] != true || !strings.Contains(m["error"].(string), "not repeated") {
		t.Fatalf("interact over a broken link: %d %v, want 503 telling to retry", code, m)
	}
	if opens.Load() != 2 || len(p.opened) != 1 || p.state() != "ready" {
		t.Errorf("after relinking: %d opens, %d links open, state %s; want 2, 1, ready", opens.Load(), len(p.opened), p.state())
	}
	if fg, _ := p.dev.Phone.Foreground(); fg == "com.android.settings" || taps.Load() != 0 {
		t.Errorf("the failed tap was repeated (%d taps, foreground %s)", taps.Load(), fg)
	}
	// The new link works; the client's retry taps once.
	broken.Store(false)
	p.mustDo(200, "POST", "/interact", tap)
	if fg, _ := p.dev.Phone.Foreground(); fg != "com.android.settings" || taps.Load() != 1 {
		t.Errorf("retry: %d taps, foreground %s", taps.Load(), fg)
	}

	// When the device cannot be opened again, the session is required.
	broken.Store(true)
	reopenFails.Store(true)
	code, m = p.do("POST", "/interact", tap)
	if code != 502 || !strings.Contains(m["error"].(string), "the phone is gone") || !strings.Contains(m["error"].(string), "POST /session") {
		t.Errorf("interact when the device is gone: %d %v", code, m)
	}
	sess := p.mustDo(200, "GET", "/runtime-info", nil)["session"].(map[string]any)
	if sess["state"] != "required" || !strings.Contains(sess["error"].(string), "the phone is gone") || len(p.opened) != 0 {
		t.Errorf("session after losing the device: %v, %d links open", sess, len(p.opened))
	}
}

// flakyPhone is a playground whose device links break on demand.
type flakyPhone struct {
	*phone
	broken    atomic.Bool
	taps      atomic.Int32
	opens     atomic.Int32
	failShots atomic.Int32
}

func startFlaky(t *testing.T, opts server.Options) *flakyPhone {
	f := &flakyPhone{}
	f.phone = startPhone(t, &phoneOptions{opts: opts, open: func(ctx context.Context, id string, real func() (device.Driver, device.Target, func(), error)) (device.Driver, device.Target, func(), error) {
		f.opens.Add(1)
		d, tg, release, err := real()
		if err != nil {
			return nil, tg, nil, err
		}
		return brokenLink{d, &f.broken, &f.taps, &f.failShots}, tg, release, nil
	}})
	return f
}

// TestTaskRelinksABrokenLink: a task whose device link breaks ends in
// error, the session opens the device again, and the next task runs.
func TestTaskRelinksABrokenLink(t *testing.T) {
	p := startFlaky(t, server.Options{})
	p.ready()
	p.broken.Store(true)
	m := p.mustDo(200, "POST", "/execute", map[string]any{"action": "Tap", "params": map[string]any{"locate": "Settings"}})
	if m["status"] != "error" || !strings.Contains(m["error"].(string), "offline") {
		t.Fatalf("task over a broken link: %v %v, want error naming the offline device", m["status"], m["error"])
	}
	if p.opens.Load() != 2 || len(p.opened) != 1 || p.state() != "ready" {
		t.Errorf("after the task: %d opens, %d links open, state %s; want 2, 1, ready", p.opens.Load(), len(p.opened), p.state())
	}
	p.broken.Store(false)
	if m := p.mustDo(200, "POST", "/execute", map[string]any{"goal": `tap "Settings"`}); m["status"] != "done" {
		t.Errorf("the next task: %v %v", m["status"], m["error"])
	}
	if p.taps.Load() != 1 {
		t.Errorf("%d taps reached the phone, want 1 (the second task's)", p.taps.Load())
	}
}

// TestCancelPassesThroughRecreating: a cancelled task leaves the session
// recreating while the link is checked, then ready on the same link.
func TestCancelPassesThroughRecreating(t *testing.T) {
	p := startFlaky(t, server.Options{})
	p.ready()
	ev := p.events()
	ev.next(t) // the ready session
	id := p.mustDo(202, "POST", "/execute", map[string]any{"goal": longGoal, "async": true})["requestId"].(string)
	p.mustDo(200, "POST", "/cancel/"+id, nil)
	var states []string
	for len(states) == 0 || states[len(states)-1] != "ready" {
		if typ, m := ev.next(t); typ == "session" {
			states = append(states, m["session"].(map[string]any)["state"].(string))
		}
	}
	if got := strings.Join(states, ","); !strings.HasSuffix(got, "running,recreating,ready") {
		t.Errorf("session states around a cancel: %s, want running, recreating, ready", got)
	}
	if p.opens.Load() != 1 {
		t.Errorf("%d opens: a cancel reopened a working link", p.opens.Load())
	}
}

// TestPreviewRelinksABrokenLink: the preview's screenshots fail as
// offline; the device is opened again and the stream goes on.
func TestPreviewRelinksABrokenLink(t *testing.T) {
	p := startFlaky(t, server.Options{})
	p.ready()
	mr := p.mjpeg()
	if _, err := mr.NextPart(); err != nil {
		t.Fatal(err)
	}
	p.failShots.Store(1)
	deadline := time.Now().Add(patience.Of(20 * time.Second))
	for p.opens.Load() < 2 && time.Now().Before(deadline) {
		if _, err := mr.NextPart(); err != nil {
			t.Fatalf("the stream ended while relinking: %v", err)
		}
	}
	if p.opens.Load() != 2 {
		t.Fatalf("%d opens after a broken preview screenshot, want 2", p.opens.Load())
	}
	// A new screen reaches the stream through the new link.
	frame := func() []byte {
		part, err := mr.NextPart()
		if err != nil {
			t.Fatalf("the stream ended after relinking: %v", err)
		}
		b, err := io.ReadAll(part)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jpeg.Decode(bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := frame()
	p.mustDo(200, "POST", "/interact", map[string]any{"action": "Tap", "params": map[string]any{"locate": "Settings"}})
	for bytes.Equal(frame(), before) {
	}
	if code, _ := p.raw("GET", "/screenshot", nil, nil); code != 200 {
		t.Errorf("screenshot after relinking: %d", code)
	}
	p.failShots.Store(1)
	if code, m := p.do("GET", "/screenshot", nil); code != 503 || m["retry"] != true {
		t.Errorf("screenshot over a broken link: %d %v, want 503 telling to retry", code, m)
	}
}
