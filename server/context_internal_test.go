package server

import (
	"fmt"
	"testing"
	"time"
)

// Contexts expire after contextTTL, and only the newest keepContexts are
// kept.
func TestContextsExpireAndStayFew(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	cs := newContexts(func() time.Time { return now })
	first := cs.add(Context{Goal: "first"})
	now = now.Add(contextTTL - time.Second)
	second := cs.add(Context{Goal: "second"})
	if c, ok := cs.get(first.UUID); !ok || c.Goal != "first" {
		t.Fatalf("a context %v old: %v %v; want it kept", contextTTL-time.Second, c, ok)
	}
	now = now.Add(time.Second)
	if _, ok := cs.get(first.UUID); ok {
		t.Errorf("a context %v old is still answered", contextTTL)
	}
	if _, ok := cs.get(second.UUID); !ok {
		t.Errorf("a context a second old is gone")
	}

	var ids []string
	for i := range keepContexts + 5 {
		ids = append(ids, cs.add(Context{Goal: fmt.Sprint(i)}).UUID)
	}
	if len(cs.list) != keepContexts {
		t.Errorf("%d contexts kept; want %d", len(cs.list), keepContexts)
	}
	for i, id := range ids {
		if _, ok := cs.get(id); ok != (i >= 5) {
			t.Errorf("context %d of %d: kept = %v", i, len(ids), ok)
		}
	}
	if _, ok := cs.get(second.UUID); ok {
		t.Errorf("the oldest context outlived %d newer ones", len(ids))
	}
	if a, b := newUUID(), newUUID(); a == b || len(a) != 36 || a[14] != '4' {
		t.Errorf("newUUID gave %s and %s; want distinct version 4 UUIDs", a, b)
	}
}
