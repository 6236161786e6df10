package server

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/apexagent/apex/internal/httpguard"
)

// Limits bound what clients can make the playground keep or run. A zero
// field takes its default; docs/security.md lists them.
type Limits struct {
	// TaskSteps bounds the steps one task of POST /execute runs (a step's
	// repeats included); the step past it fails. Default 1000.
	TaskSteps int
	// InlineRecord bounds the bytes of a task's record (dump) or report
	// page an answer carries; past it the answer says where to read it
	// (dumpUrl, report.url). Default 8 MiB.
	InlineRecord int
	// KeptResult bounds the bytes of result a finished task keeps for
	// /task-progress; past it the result keeps its status, reason and
	// summary and points to the record. Default 256 KiB.
	KeptResult int
	// RecordedActions bounds the actions of one recording; /interact
	// answers 429 past it while recording. Default 2000.
	RecordedActions int
	// RecorderFrames bounds the bytes of screenshots one recording keeps
	// (on disk); actions past it are recorded without them. Default
	// 256 MiB.
	RecorderFrames int64
	// AuthFailures is how many wrong tokens one address may send a
	// minute; past it the address is answered 429 until the minute ends.
	// Default httpguard.MaxFailures (10).
	AuthFailures int
	// EventReplay is how many of the last events GET /events keeps for
	// a stream that resumes (Last-Event-ID); one that missed more gets a
	// gap event and lists the tasks it missed (GET /tasks?since=).
	// Default 1024.
	EventReplay int
	// Viewers bounds the live previews streaming at once (MJPEG, the
	// H.264 WebSocket and WebRTC peers together); past it a new one is
	// answered 503 with Retry-After. Default 32.
	Viewers int
}

// withDefaults is l with every zero field at its default.
func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.TaskSteps, 1000)
	def(&l.InlineRecord, 8<<20)
	def(&l.KeptResult, 256<<10)
	def(&l.RecordedActions, 2000)
	def(&l.AuthFailures, httpguard.MaxFailures)
	def(&l.EventReplay, replayBuffer)
	def(&l.Viewers, 32)
	if l.RecorderFrames <= 0 {
		l.RecorderFrames = 256 << 20
	}
	return l
}

// viewers counts the live previews streaming (Limits.Viewers).
type viewers struct{ n atomic.Int64 }

// viewerRetry is the Retry-After of a viewer turned away.
const viewerRetry = 5

// watch takes a place for one more live preview and returns the func that
// gives it back, to be called once (every caller defers it, or calls it on
// the error path that returns), or answers 503 and returns nil when
// Limits.Viewers are streaming already.
func (s *Server) watch(w http.ResponseWriter) (leave func()) {
	if n := s.viewers.n.Add(1); n > int64(s.opts.Limits.Viewers) {
		s.viewers.n.Add(-1)
		w.Header().Set("Retry-After", strconv.Itoa(viewerRetry))
		writeError(w, http.StatusServiceUnavailable, fmt.Errorf("%d live previews already stream from this playground (its limit): close one, or watch /screenshot", s.opts.Limits.Viewers))
		return nil
	}
	return func() { s.viewers.n.Add(-1) }
}
