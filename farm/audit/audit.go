// Package audit is the farm's append-only log of leases, runs and admin
// actions, kept in a JetStream stream.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/nats-io/nats.go/jetstream"
)

// Kinds of events.
const (
	LeaseAcquired = "lease.acquired"
	LeaseReleased = "lease.released"
	LeaseExpired  = "lease.expired" // the holder stopped renewing (found by the reaper)
	LeaseBroken   = "lease.broken"  // an admin broke it
	LeaseLost     = "lease.lost"    // its holder could not renew and stopped
	LeaseRevoked  = "lease.revoked" // the token that took it was revoked: released now
	RunQueued     = "run.queued"
	RunState      = "run.state"
	RunCanceled   = "run.canceled"
	// Admin actions.
	AdminUserAdded        = "admin.user_added"
	AdminProjectAdded     = "admin.project_added"
	AdminMemberAdded      = "admin.member_added"
	AdminTokenCreated     = "admin.token_created"
	AdminJoinTokenCreated = "admin.join_token_created"
	AdminTokenRevoked     = "admin.token_revoked"
)

// Event is one entry. Resource is what a lease holds (a device ID, or a
// project slot); Fence is the lease's fencing token.
type Event struct {
	Seq      uint64    `json:"seq,omitempty"` // stream sequence, set by Read
	Kind     string    `json:"kind"`
	Actor    string    `json:"actor,omitempty"`
	Resource string    `json:"resource,omitempty"`
	Run      string    `json:"run,omitempty"`
	State    string    `json:"state,omitempty"`
	Fence    uint64    `json:"fence,omitempty"`
	Detail   string    `json:"detail,omitempty"`
	Time     time.Time `json:"time"`
}

// Log appends e and waits for the stream to store it, so events of one
// writer are in the order it did things. Events are unique by kind,
// resource, run, state and fence within the stream's duplicate window.
func Log(ctx context.Context, js jetstream.JetStream, e Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	// Tried until stored (a cluster may be electing a leader); the ID
	// keeps a retried event from being stored twice.
	id := fmt.Sprintf("%s/%s/%s/%s/%d", e.Kind, e.Resource, e.Run, e.State, e.Fence)
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = farm.Retry(rctx, func(ctx context.Context) error {
		_, err := js.Publish(ctx, "audit."+e.Kind, data, jetstream.WithMsgID(id))
		return err
	})
	if err != nil {
		return fmt.Errorf("audit: log %s: %w", e.Kind, err)
	}
	return nil
}

// Read returns every event in the log, oldest first.
func Read(ctx context.Context, js jetstream.JetStream) ([]Event, error) {
	// A cluster electing the stream's leader (a member died) answers no
	// one for a while: ask again until it does.
	var msgs, last uint64
	var c jetstream.Consumer
	err := farm.Retry(ctx, func(ctx context.Context) error {
		s, err := js.Stream(ctx, farm.StreamAudit)
		if err != nil {
			return err
		}
		info, err := s.Info(ctx)
		if err != nil {
			return err
		}
		if msgs, last = info.State.Msgs, info.State.LastSeq; msgs == 0 {
			return nil
		}
		c, err = js.CreateConsumer(ctx, farm.StreamAudit, jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy,
			MemoryStorage: true, Replicas: 1, InactiveThreshold: time.Minute})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("audit: read: %w", err)
	}
	if msgs == 0 {
		return nil, nil
	}
	defer js.DeleteConsumer(context.WithoutCancel(ctx), farm.StreamAudit, c.CachedInfo().Name)
	var out []Event
	for {
		batch, err := c.Fetch(500, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return out, fmt.Errorf("audit: read: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			var e Event
			if json.Unmarshal(m.Data(), &e) == nil {
				e.Seq = md.Sequence.Stream
				out = append(out, e)
			}
			if md.Sequence.Stream >= last {
				return out, nil
			}
		}
		if err := batch.Error(); err != nil {
			return out, fmt.Errorf("audit: read: %w", err)
		}
		if n == 0 {
			return out, fmt.Errorf("audit: read: the log ended at %d events, before sequence %d", len(out), last)
		}
	}
}
