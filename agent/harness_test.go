package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/event"
	"github.com/apexagent/apex/internal/labtest"
	"github.com/apexagent/apex/sim/lab"
	"github.com/apexagent/apex/store"
)

// phone is one simulated phone driven through the real path: the lab's
// adbd over TCP and device/android's direct driver.
type phone struct {
	dev *lab.Device
	drv *android.Driver
}

func startPhone(t testing.TB, seed int64) *phone {
	t.Helper()
	return startPhoneWith(t, lab.Options{Android: 1, Seed: seed})
}

// startPhoneWith starts the lab's first phone with opts (its apps, say).
func startPhoneWith(t testing.TB, opts lab.Options) *phone {
	t.Helper()
	dev, d := labtest.Android(t, opts)
	return &phone{dev: dev, drv: d}
}

// launch starts an app; "" stays on the launcher.
func (p *phone) launch(t testing.TB, pkg string) {
	t.Helper()
	if pkg == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.drv.LaunchApp(ctx, pkg); err != nil {
		t.Fatal(err)
	}
}

// state is the app's state as the simulated phone keeps it (not what the
// agent claims).
func (p *phone) state(t testing.TB, pkg string) map[string]any {
	t.Helper()
	st, err := p.dev.Phone.State(pkg)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func openStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// eventLog collects events for assertions and failure messages.
type eventLog struct {
	mu  sync.Mutex
	evs []event.Event
}

func (l *eventLog) add(e event.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, e)
}

func dump(evs []event.Event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.ActionType == event.EvObserved || e.ActionType == event.EvState {
			continue
		}
		fmt.Fprintf(&b, "  %s %s→%s %s [%s %.2f] %s\n", e.ID, e.SourceRole, e.TargetRole, e.ActionType, e.Status, e.Confidence, truncate(string(e.Payload), 300))
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// payloads decodes the payloads of events of one type.
func payloads[T any](t testing.TB, evs []event.Event, typ string) []T {
	t.Helper()
	var out []T
	for _, e := range evs {
		if e.ActionType != typ {
			continue
		}
		var v T
		if err := json.Unmarshal(e.Payload, &v); err != nil {
			t.Fatalf("event %s %s: %v", e.ID, typ, err)
		}
		out = append(out, v)
	}
	return out
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var _ device.Driver = (*android.Driver)(nil)
