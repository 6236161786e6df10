package farm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/auth"
	"github.com/apexagent/apex/farm/farmtest"
	"github.com/apexagent/apex/farm/records"
	"github.com/nats-io/nats.go"
)

// TestObjectStoreDeniedFailsAtOnce: opening an object store the token may
// not read fails with the permission error, not after a minute of asking
// again; one it may read opens.
func TestObjectStoreDeniedFailsAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := farmtest.StartToken(ctx, t, "the-farm-admin-token", 0)
	tok := farmtest.Users(ctx, t, p, []string{"A", "B"}, farmtest.Member{User: "alice", Role: auth.Viewer, Projects: []string{"A"}})["alice"]
	nc, js, err := farm.Connect(farm.ConnectOptions{URL: p.ClientURL(), Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := farm.ObjectStore(ctx, js, records.Bucket("A"), ""); err != nil {
		t.Errorf("her project's records: %v", err)
	}
	// Shorter than the minute ObjectStore keeps asking a busy cluster.
	octx, ocancel := context.WithTimeout(ctx, 30*time.Second)
	defer ocancel()
	_, err = farm.ObjectStore(octx, js, records.Bucket("B"), "")
	if !errors.Is(err, nats.ErrPermissionViolation) || octx.Err() != nil {
		t.Errorf("another project's records: %v (waited out: %v), want the permission violation at once", err, octx.Err())
	}
}
