package server

import "github.com/apexagent/apex/internal/supervise"

// Supervised is one start or end of a process a supervisor keeps running
// for the session's device (the simulated phone's `apex sim`, its
// screenrecord's ffmpeg), as GET /events sends it (type "supervisor").
type Supervised struct {
	Name      string `json:"name"` // what runs, e.g. "the simulated phone (apex sim)"
	Kind      string `json:"kind"` // started, exited (a crash or an end; it is restarted) or stopped
	Run       int    `json:"run"`  // 1 for the first run
	Error     string `json:"error,omitempty"`
	RestartMs int64  `json:"restartMs,omitempty"` // exited: the wait before the next run
	Text      string `json:"text"`                // the whole event in a sentence
}

// Supervised publishes a supervised process's event on GET /events, so
// the page says when the device's streaming or the phone itself crashed
// and when it is back. The first start and the final stop are not news:
// only an exit and the restart after it are sent. Safe for concurrent use
// (supervise.Options.OnEvent calls it from the supervisor's goroutine).
func (s *Server) Supervised(e supervise.Event) {
	if e.Kind == supervise.Stopped || (e.Kind == supervise.Started && e.Run == 1) {
		return
	}
	v := Supervised{Name: e.Name, Kind: string(e.Kind), Run: e.Run, RestartMs: e.Backoff.Milliseconds(), Text: e.String()}
	if e.Err != nil {
		v.Error = e.Err.Error()
	}
	s.events.publish(Message{Type: "supervisor", Supervised: &v})
}
