package server_test

import (
	"bufio"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/apexagent/apex/server"
)

// resumeEvents opens GET /events as a client resuming from event id last.
func (p *phone) resumeEvents(last string) *sse {
	p.t.Helper()
	req, err := http.NewRequestWithContext(testCtx(p.t), "GET", p.http.URL+"/events", nil)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Last-Event-ID", last)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { resp.Body.Close() })
	return &sse{sc: bufio.NewScanner(resp.Body)}
}

// TestEventsResume: every event carries an id; a stream that resumes from
// the id it last saw is sent what it missed — a whole task that ran
// meanwhile — and, when the server kept too few events for that, a gap
// event naming that id, after which GET /tasks?since= lists the task.
func TestEventsResume(t *testing.T) {
	for _, tc := range []struct {
		name   string
		replay int
		gap    bool
	}{
		{"replayed", 0, false},
		{"gap", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPhone(t, &phoneOptions{opts: server.Options{Limits: server.Limits{EventReplay: tc.replay}}})
			p.ready()
			ev := p.events()
			id, typ, _ := ev.nextWithID(t)
			if typ != "session" || id == "" {
				t.Fatalf("first event %s with id %q; want the session with an id", typ, id)
			}
			done := p.mustDo(200, "POST", "/execute", map[string]any{"goal": `tap "Settings"`})
			task := done["requestId"].(string)

			again := p.resumeEvents(id)
			var types []string
			ended := false
			for !ended {
				_, typ, m := again.nextWithID(t)
				types = append(types, typ)
				switch {
				case typ == "gap":
					if got := m["gap"]; got != mustFloat(t, id) {
						t.Errorf("gap %v; want the id resumed from, %s", got, id)
					}
				case typ == "task" && m["requestId"] == task:
					ended = true
				case typ == "session" && len(types) > 1 && types[len(types)-2] == "gap":
					ended = true // after a gap, the state now
				}
			}
			if tc.gap != (types[0] == "gap") {
				t.Errorf("resumed stream began %v; want a gap: %v", types, tc.gap)
			}
			if !tc.gap && (!slices.Contains(types, "progress") || types[0] != "session") {
				t.Errorf("resumed stream %v; want the task's session, progress and end replayed", types)
			}
			list := p.mustDo(200, "GET", "/tasks?since="+id, nil)["tasks"].([]any)
			if len(list) != 1 || list[0].(map[string]any)["requestId"] != task || list[0].(map[string]any)["status"] != "done" {
				t.Errorf("GET /tasks?since=%s = %v; want the task that ran", id, list)
			}
			last := p.mustDo(200, "GET", "/tasks", nil)["lastEventId"].(float64)
			if got := p.mustDo(200, "GET", "/tasks?since="+strconv.Itoa(int(last)+1), nil)["tasks"].([]any); len(got) != 0 {
				t.Errorf("tasks since the last event: %v; want none", got)
			}
		})
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// nextWithID is next with the event's id.
func (s *sse) nextWithID(t *testing.T) (id, typ string, m map[string]any) {
	t.Helper()
	typ, m = s.next(t)
	return s.id, typ, m
}

// TestEventsResumeFromAnotherServer: an id this server never gave (the
// client saw the events of a server since restarted) is a gap from the
// start: the client lists every task kept.
func TestEventsResumeFromAnotherServer(t *testing.T) {
	p := startPhone(t, nil)
	p.ready()
	typ, m := p.resumeEvents("999999").next(t)
	if typ != "gap" || m["gap"] != float64(0) {
		t.Errorf("first event %s %v; want a gap since 0", typ, m)
	}
}
