package console_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/internal/patience"
)

// TestBrokenLeaseClosesPlayground: when the console's lease of a phone
// ends without the console closing its playground session (broken by an
// admin here; a lapse is the same to the host), the host closes the
// session itself.
func TestBrokenLeaseClosesPlayground(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Of(2*time.Minute))
	defer cancel()
	rec := &seen{}
	p, srv := doorFarm(ctx, t, rec, nil)
	do := consoleClient(ctx, t, srv.URL, map[string]string{"admin": "the-farm-admin-token"})
	waitDevice(ctx, t, do, "admin", "h1/sim-1")
	openPlayground(t, do, "admin", "h1/sim-1")
	closed := func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return slices.ContainsFunc(rec.reqs, func(r *http.Request) bool { return r.Method == "DELETE" && r.URL.Path == "/session" })
	}
	if closed() {
		t.Fatal("the session was closed before the lease ended")
	}
	if err := farmtest.Leases(ctx, t, p).Break(ctx, "h1/sim-1", "admin"); err != nil {
		t.Fatal(err)
	}
	for !closed() {
		select {
		case <-ctx.Done():
			t.Fatal("the host did not close the playground session of the broken lease")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
