package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/apexagent/apex/agent"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/device/hub"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/server"
	"github.com/apexagent/apex/sim/lab"
	"github.com/chromedp/chromedp"
)

// labBooter boots simulated Android phones in this process (the cli's
// booter starts apex sim processes; cli.TestPlaygroundBoots tests those),
// refusing past its cap as a session host does.
type labBooter struct {
	cap  int
	mu   sync.Mutex
	labs map[string]*lab.Lab // by target id
}

func (b *labBooter) Platforms() []device.Platform { return []device.Platform{device.Android} }

func (b *labBooter) Boot(ctx context.Context, _ device.Platform) (device.Target, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.labs) >= b.cap {
		return device.Target{}, fmt.Errorf("host booted: %w: %d of %d sessions run", hub.ErrRunCap, len(b.labs), b.cap)
	}
	l, err := lab.Start(context.WithoutCancel(ctx), lab.Options{Android: 1})
	if err != nil {
		return device.Target{}, err
	}
	addr := l.Devices()[0].Addr
	t := device.Target{ID: "booted/" + addr, Host: "booted", Serial: addr, Platform: device.Android, State: "device", Model: "Apex Sim"}
	b.labs[t.ID] = l
	return t, nil
}

func (b *labBooter) Shutdown(_ context.Context, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.labs[id]
	if !ok {
		return device.ErrNotFound
	}
	delete(b.labs, id)
	return l.Close()
}

func (b *labBooter) targets() []device.Target {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []device.Target
	for id, l := range b.labs {
		addr := l.Devices()[0].Addr
		out = append(out, device.Target{ID: id, Host: "booted", Serial: addr, Platform: device.Android, State: "device", Model: "Apex Sim"})
	}
	return out
}

// TestBootButtonInBrowser: with no device, the page's Boot button starts
// a phone, which the devices list offers and opens; a second boot past
// the cap says so; Shut down stops the phone once disconnected.
func TestBootButtonInBrowser(t *testing.T) {
	b := &labBooter{cap: 1, labs: map[string]*lab.Lab{}}
	t.Cleanup(func() {
		for _, tg := range b.targets() {
			b.Shutdown(context.Background(), tg.ID)
		}
	})
	srv, err := server.New(server.Options{
		Booter:  b,
		Targets: func(context.Context) ([]device.Target, error) { return b.targets(), nil },
		Open: func(ctx context.Context, id string) (device.Driver, device.Target, func(), error) {
			for _, tg := range b.targets() {
				if tg.ID == id {
					d, err := android.OpenDirect(ctx, tg.Serial, nil)
					if err != nil {
						return nil, tg, nil, err
					}
					return d, tg, func() { d.Close() }, nil
				}
			}
			return nil, device.Target{}, nil, errors.New("no device " + id)
		},
		NewAgent: func(_ server.ModelSettings, onEvent func(event.Event)) (agent.AI, error) {
			return agent.New(agent.Config{OnEvent: onEvent})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close() })
	ctx := browserTab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(hs.URL+"/?preview=mjpeg")); err != nil {
		t.Fatal(err)
	}
	const bootButton = `document.querySelector('#boot-row button[data-platform="android"]')`
	waitFor(t, ctx, "the Boot button", bootButton+` !== null && !document.getElementById("boot-row").hidden`)
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](bootButton+`.click()`)); err != nil {
		t.Fatal(err)
	}
	// The only device online opens by itself.
	waitFor(t, ctx, "the booted phone's session", `document.body.dataset.session === "ready"`)
	id := b.targets()[0].ID
	if log := eval[string](t, ctx, `document.getElementById("log").innerText`); !strings.Contains(log, "Booted "+id) {
		t.Errorf("the conversation does not say the phone booted:\n%s", log)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#disconnect"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the devices list again", `!document.getElementById("setup").hidden && document.getElementById("device-select").value === "`+id+`"`)
	waitFor(t, ctx, "Shut down offered for the booted phone", `!document.getElementById("shutdown").hidden`)
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](bootButton+`.click()`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the run cap's refusal", `document.getElementById("log").innerText.includes("run cap reached")`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#shutdown"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the phone shut down", `document.getElementById("log").innerText.includes("Shut down `+id+`") && document.getElementById("device-select").options.length === 0`)
	if n := len(b.targets()); n != 0 {
		t.Errorf("%d phones still run after Shut down", n)
	}
}
