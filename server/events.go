package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Message is one server-sent event of GET /events: a session's state,
// one entry of a task's progress, or a supervised process's crash or
// restart. A task's entries come in seq order; its last, the end, is the
// task message, which carries the ended task too.
type Message struct {
	Type       string       `json:"type"` // session, progress, task, supervisor; gap on a stream that resumed too late
	RequestID  string       `json:"requestId,omitempty"`
	Progress   *Progress    `json:"progress,omitempty"`
	Task       *TaskView    `json:"task,omitempty"` // a task that ended, with its progress after the end entry (none)
	Session    *SessionView `json:"session,omitempty"`
	Supervised *Supervised  `json:"supervisor,omitempty"`
	// Gap is the last event id a resuming client saw, when the server no
	// longer holds the events after it: GET /tasks?since=ID lists the
	// tasks it missed.
	Gap *uint64 `json:"gap,omitempty"`
	// ID numbers the published messages 1, 2, …: the SSE id a client
	// resumes from (Last-Event-ID).
	ID uint64 `json:"-"`
}

// subscriberBuffer is how far a client may fall behind before it is
// dropped (an EventSource reconnects and resumes from its last id).
const subscriberBuffer = 256

// replayBuffer is how many of the last messages a resuming stream is
// sent again; a client further behind gets a gap message.
const replayBuffer = 1024

// broker fans messages out to the /events streams without ever blocking
// the publisher (a running task), and keeps the last replayBuffer of them
// for the streams that resume.
type broker struct {
	mu     sync.Mutex
	subs   map[chan Message]struct{}
	closed bool
	seq    uint64    // the id of the last message published
	recent []Message // the last ones, oldest first
	replay int       // len(recent) at most (replayBuffer; tests lower it)
}

func (b *broker) init() {
	b.subs = map[chan Message]struct{}{}
	if b.replay <= 0 {
		b.replay = replayBuffer
	}
}

func (b *broker) subscribe() (chan Message, bool) {
	c, _, _, ok := b.resume(0, false, nil)
	return c, ok
}

// resume subscribes a stream; with from set, it also returns the messages
// after id last to send first or, when they are no longer all kept, gap:
// the id after which the client missed what (0 for an id this server
// never gave: the client saw another process's, before a restart). A
// non-nil now adds the message it makes (the state as it stands) to
// replay, with the id of the last message published: the stream's
// messages are those after it.
func (b *broker) resume(last uint64, from bool, now func() Message) (c chan Message, replay []Message, gap *uint64, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, nil, nil, false
	}
	defer func() {
		if now != nil {
			m := now()
			m.ID = b.seq
			replay = append(replay, m)
		}
	}()
	switch {
	case !from || last == b.seq:
	case last > b.seq:
		gap = new(uint64)
	default:
		oldest := b.seq - uint64(len(b.recent)) + 1
		if last+1 < oldest {
			gap = &last
		} else {
			replay = slices.Clone(b.recent[last+1-oldest:])
		}
	}
	c = make(chan Message, subscriberBuffer)
	b.subs[c] = struct{}{}
	return c, replay, gap, true
}

// last is the id of the last message published.
func (b *broker) last() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seq
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
	b.publishNow(func() Message { return m })
}

// publishNow publishes the message now makes under the broker's lock: a
// state read there (the session's) is published in the order it was
// read, so the last message a client sees is the state as it stands.
// now must not publish.
func (b *broker) publishNow(now func() Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := now()
	b.seq++
	m.ID = b.seq
	if len(b.recent) == b.replay {
		b.recent = append(b.recent[:0], b.recent[1:]...)
	}
	b.recent = append(b.recent, m)
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
// message as it happens, each with its id. A client that comes back with
// the last id it saw (the Last-Event-ID header of an EventSource
// reconnecting, or ?lastEventId= on a new one) is first sent what it
// missed, or a gap message when that is no longer kept.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("streaming is not supported here"))
		return
	}
	last, from, err := lastEventID(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	// The state now, which the messages before it led to, is sent last,
	// with the id of the last of them: a client that sees nothing else
	// resumes there.
	c, replay, gap, ok := s.events.resume(last, from, func() Message {
		return Message{Type: "session", Session: ptr(s.sess.view())}
	})
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
	first := []Message{}
	if gap != nil {
		first = append(first, Message{Type: "gap", Gap: gap})
	}
	first = append(first, replay...)
	for _, m := range first {
		if writeEvent(w, m) != nil {
			return
		}
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

// lastEventID is the id a client resumes its event stream from: the
// Last-Event-ID header, else ?lastEventId=; from is false when neither is
// given (a new client, sent the state now).
func lastEventID(r *http.Request) (uint64, bool, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("lastEventId")
	}
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("Last-Event-ID %q: want the id of the last event seen", v)
	}
	return n, true, nil
}

func writeEvent(w http.ResponseWriter, m Message) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if m.Type != "gap" { // a gap resumes nothing: the client keeps its last id
		_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", m.ID, m.Type, data)
	} else {
		_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", m.Type, data)
	}
	return err
}
