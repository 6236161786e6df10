package device

import (
	"context"
	"time"
)

// LogReader is a driver that reads the device's own log (Android's
// logcat) with a fixed command of its own: callers get lines, never a
// shell.
type LogReader interface {
	// ReadLog returns the log lines stamped after since, oldest first, at
	// most the newest max of them.
	ReadLog(ctx context.Context, since time.Time, max int) ([]LogEntry, error)
}

// LogEntry is one line of a device's log.
type LogEntry struct {
	Time time.Time `json:"time"`
	Line string    `json:"line"`
}
