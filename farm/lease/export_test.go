package lease

import "time"

// Written is how many leases l keeps its last write of.
func Written(l *Leaser) int {
	n := 0
	l.wrote.Range(func(any, any) bool { n++; return true })
	return n
}

// SetClock makes l read the time from now.
func SetClock(l *Leaser, now func() time.Time) { l.now = now }
