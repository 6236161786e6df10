package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/apexagent/apex/server"
	"github.com/chromedp/chromedp"
)

// eventGate holds the page's GET /events while closed, to keep its event
// stream away while a task runs; it records the Last-Event-ID each held
// request resumes from.
type eventGate struct {
	mu     sync.Mutex
	open   chan struct{}
	held   chan string // the Last-Event-ID of each request held
	closed bool
}

func (g *eventGate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		closed, open := g.closed, g.open
		g.mu.Unlock()
		if closed && r.URL.Path == "/events" {
			select {
			case g.held <- r.Header.Get("Last-Event-ID") + r.URL.Query().Get("lastEventId"):
			default:
			}
			select {
			case <-open:
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func (g *eventGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed, g.open, g.held = true, make(chan struct{}), make(chan string, 16)
}

func (g *eventGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = false
	close(g.open)
}

// TestPageCatchesUpInBrowser: the page's event stream drops and stays
// away while a short task runs elsewhere, start to end; when the stream
// is back (the browser's own reconnection, resuming from Last-Event-ID)
// the page shows that task and how it ended — from the events replayed,
// or, when the server kept too few of them, from the tasks it lists after
// the gap event.
func TestPageCatchesUpInBrowser(t *testing.T) {
	for _, tc := range []struct {
		name   string
		replay int
		shows  string // what the page says of the task
	}{
		{"replayed", 0, "already running"},
		{"gap", 2, "ran while this page was away"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPhone(t, &phoneOptions{opts: server.Options{Limits: server.Limits{EventReplay: tc.replay}}})
			p.ready()
			g := &eventGate{}
			page := httptest.NewServer(g.wrap(p.srv.Handler()))
			t.Cleanup(page.Close)
			ctx := browserTab(t)
			if err := chromedp.Do(ctx, chromedp.Navigate(page.URL+"/?preview=mjpeg")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, "the session to be ready", `document.body.dataset.session === "ready" && ui.listened`)

			g.close()
			page.CloseClientConnections()
			var last string
			select {
			case last = <-g.held:
			case <-ctx.Done():
				t.Fatal("the page did not reconnect its event stream")
			}
			if last == "" {
				t.Error("the page reconnected without the id of the last event it saw")
			}
			id := p.mustDo(200, "POST", "/execute", map[string]any{"goal": `tap "Settings"`})["requestId"].(string)
			g.release()

			waitFor(t, ctx, "the page to show the task that ran while its stream was away",
				`document.querySelector('#log .status[data-task="`+id+`"]') !== null`)
			if cls := eval[string](t, ctx, `document.querySelector('#log .status[data-task="`+id+`"]').className`); !strings.Contains(cls, "status-done") {
				t.Errorf("the missed task shows %q; want done", cls)
			}
			if log := eval[string](t, ctx, `document.getElementById("log").innerText`); !strings.Contains(log, "task "+id) || !strings.Contains(log, tc.shows) {
				t.Errorf("the page says of the missed task:\n%s\nwant %q", log, tc.shows)
			}
			if n := eval[int](t, ctx, `document.querySelectorAll('#log .status[data-task="`+id+`"]').length`); n != 1 {
				t.Errorf("the task's end shows %d times; want once", n)
			}
		})
	}
}
