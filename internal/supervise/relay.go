package supervise

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"
)

// relayed is an Event as one line of JSON between processes.
type relayed struct {
	Name      string `json:"name"`
	Kind      Kind   `json:"kind"`
	Run       int    `json:"run"`
	Error     string `json:"error,omitempty"`
	BackoffMs int64  `json:"backoffMs,omitempty"`
}

// Relay returns an OnEvent that writes each event to w as one line of
// JSON, for the process that started this one (ReadRelayed): the events of
// what a supervised process supervises in turn reach its parent. Safe for
// concurrent use; a write that fails is dropped (the parent went).
func Relay(w io.Writer) func(Event) {
	var mu sync.Mutex
	return func(e Event) {
		r := relayed{Name: e.Name, Kind: e.Kind, Run: e.Run, BackoffMs: e.Backoff.Milliseconds()}
		if e.Err != nil {
			r.Error = e.Err.Error()
		}
		b, err := json.Marshal(r)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write(append(b, '\n'))
	}
}

// ReadRelayed calls on with each event Relay wrote to r, until r ends; a
// line that is not such an event is skipped. It returns r's error (nil at
// its end).
func ReadRelayed(r io.Reader, on func(Event)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e relayed
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Name == "" || e.Run < 1 {
			continue
		}
		switch e.Kind {
		case Started, Exited, Stopped:
		default:
			continue
		}
		ev := Event{Name: e.Name, Kind: e.Kind, Run: e.Run, Backoff: time.Duration(e.BackoffMs) * time.Millisecond}
		if e.Error != "" {
			ev.Err = errors.New(e.Error)
		}
		on(ev)
	}
	return sc.Err()
}
