package sim

import (
	"fmt"
)

// maxLogLines bounds the log like logcat's ring buffer.
const maxLogLines = 2000

// logBuffer keeps log lines in `logcat -v threadtime` form.
type logBuffer struct {
	clock Clock
	buf   []string
	start int // index of the oldest line once the ring is full
}

func newLogBuffer(c Clock) *logBuffer { return &logBuffer{clock: c} }

func (l *logBuffer) add(pid int, level, tag, msg string) {
	line := fmt.Sprintf("%s %5d %5d %s %s: %s", l.clock.Now().Format("01-02 15:04:05.000"), pid, pid, level, tag, msg)
	if len(l.buf) < maxLogLines {
		l.buf = append(l.buf, line)
		return
	}
	l.buf[l.start] = line
	l.start = (l.start + 1) % maxLogLines
}

func (l *logBuffer) lines() []string {
	out := make([]string, 0, len(l.buf))
	out = append(out, l.buf[l.start:]...)
	return append(out, l.buf[:l.start]...)
}
