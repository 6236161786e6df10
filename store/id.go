package store

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/apexagent/apex/internal/lazy"
)

// idLayout makes IDs sort as their times do: fixed width, UTC, microseconds.
const idLayout = "20060102-150405.000000"

// idGen hands out run IDs that sort by start time and never repeat: within
// a process the time part strictly increases; a random suffix keeps two
// processes sharing a directory apart.
type idGen struct {
	mu   sync.Mutex
	last time.Time
}

func (g *idGen) next(now time.Time) string {
	g.mu.Lock()
	t := now.UTC().Truncate(time.Microsecond)
	if !t.After(g.last) {
		t = g.last.Add(time.Microsecond)
	}
	g.last = t
	g.mu.Unlock()
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return t.Format(idLayout) + "-" + hex.EncodeToString(b[:])
}

var validID = lazy.Regexp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// checkID rejects IDs that would escape the store's directory or are
// awkward in a path or a URL.
func checkID(id string) error {
	if !validID().MatchString(id) {
		return fmt.Errorf("run id %q: use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit", id)
	}
	return nil
}
