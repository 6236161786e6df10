package host

import (
	"context"
	"errors"

	"github.com/apexagent/apex/farm"
	"github.com/nats-io/nats.go/jetstream"
)

// pinned returns a func that takes the next run pinned to a device of
// this host, if one is queued (nil when none); slot s takes its own and
// hands the others back. Pinned runs come before the pool's.
func (a *Agent) pinned(ctx context.Context, s *slot) func() jetstream.Msg {
	var cons jetstream.Consumer
	return func() jetstream.Msg {
		if cons == nil {
			c, err := a.js.CreateOrUpdateConsumer(ctx, farm.StreamRuns, farm.PinnedConsumer(a.o.ID))
			if err != nil {
				a.log.Debug("pinned runs consumer", "device", s.reg.ID, "err", err)
				return nil
			}
			cons = c
		}
		batch, err := cons.FetchNoWait(1)
		if err != nil {
			cons = nil // its leader may have died with its member
			return nil
		}
		for m := range batch.Messages() {
			return m
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			cons = nil
		}
		return nil
	}
}
