// Package tail keeps the end of what a process writes: its last words,
// for the error of a failure, in bounded memory however much it says.
package tail

import (
	"strings"
	"sync"
)

// Buffer keeps the last Max bytes written to it. Safe for concurrent use
// (a process's stdout and stderr may share one).
type Buffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

// New keeps the last max bytes.
func New(max int) *Buffer { return &Buffer{max: max} }

func (t *Buffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) >= t.max {
		t.b = append(t.b[:0], p[len(p)-t.max:]...)
		return len(p), nil
	}
	if over := len(t.b) + len(p) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	t.b = append(t.b, p...)
	return len(p), nil
}

// String is what was kept, without the spaces around it.
func (t *Buffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
