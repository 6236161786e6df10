package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apexagent/apex/device"
)

// brokenLink is a device link whose taps fail as offline once broken.
type brokenLink struct {
	device.Driver
	broken *atomic.Bool
	taps   *atomic.Int32
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
		return brokenLink{d, &broken, &taps}, tg, release, nil
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
	if fg, _ := p.dev.Phone.Foreground(); fg == "com.apex.settings" || taps.Load() != 0 {
		t.Errorf("the failed tap was repeated (%d taps, foreground %s)", taps.Load(), fg)
	}
	// The new link works; the client's retry taps once.
	broken.Store(false)
	p.mustDo(200, "POST", "/interact", tap)
	if fg, _ := p.dev.Phone.Foreground(); fg != "com.apex.settings" || taps.Load() != 1 {
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
