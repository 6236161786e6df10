package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Message is one server-sent event of GET /events: a session's state,
// one entry of a task's progress, or a supervised process's crash or
// restart. A task's entries come in seq order; its last, the end, is the
// task message, which carries the ended task too.
type Message struct {
	Type       string       `json:"type"` // session, progress, task, supervisor
	RequestID  string       `json:"requestId,omitempty"`
	Progress   *Progress    `json:"progress,omitempty"`
	Task       *TaskView    `json:"task,omitempty"` // a task that ended, with its progress after the end entry (none)
	Session    *SessionView `json:"session,omitempty"`
	Supervised *Supervised  `json:"supervisor,omitempty"`
}

// subscriberBuffer is how far a client may fall behind before it is
// dropped (an EventSource reconnects and reads /task-progress to catch up).
const subscriberBuffer = 256

// broker fans messages out to the /events streams without ever blocking
// the publisher (a running task).
type broker struct {
	mu     sync.Mutex
	subs   map[chan Message]struct{}
	closed bool
}

func (b *broker) init() { b.subs = map[chan Message]struct{}{} }

func (b *broker) subscribe() (chan Message, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, false
	}
	c := make(chan Message, subscriberBuffer)
	b.subs[c] = struct{}{}
	return c, true
}

func (b *broker) unsubscribe(c chan Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.subs[c]; ok {
		delete(b.subs, c)
		close(c)
	}
}

func (b *broker) publish(m Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for c := range b.subs {
		select {
		case c <- m:
		default:
			delete(b.subs, c)
			close(c)
		}
	}
}

func (b *broker) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for c := range b.subs {
		delete(b.subs, c)
		close(c)
	}
}

// keepAlive is the gap between comments that keep idle streams open
// through proxies.
const keepAlive = 15 * time.Second

// stream serves GET /events: the session's state first, then every
// message as it happens.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("streaming is not supported here"))
		return
	}
	c, ok := s.events.subscribe()
	if !ok {
		writeError(w, http.StatusServiceUnavailable, fmt.Errorf("the server is shutting down"))
		return
	}
	defer s.events.unsubscribe(c)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if writeEvent(w, Message{Type: "session", Session: ptr(s.sess.view())}) != nil {
		return
	}
	fl.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case m, ok := <-c:
			if !ok {
				return
			}
			if writeEvent(w, m) != nil {
				return
			}
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		case <-r.Context().Done():
			return
		}
		fl.Flush()
	}
}

func writeEvent(w http.ResponseWriter, m Message) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", m.Type, data)
	return err
}
