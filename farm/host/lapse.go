package host

import (
	"context"
	"net/http"

	"github.com/apexagent/apex/farm"
	"github.com/nats-io/nats.go/jetstream"
)

// closeLapsed closes a device's playground session when the lease it was
// opened under ends without its holder closing it — it lapsed (its holder,
// the console, stopped renewing) or was broken: the phone is free for the
// next holder, who must not find the last one's session. It watches the
// lease bucket until ctx ends.
func (a *Agent) closeLapsed(ctx context.Context) error {
	kv, err := a.js.KeyValue(ctx, farm.BucketLeases)
	if err != nil {
		return err
	}
	w, err := kv.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		return err
	}
	a.wg.Go(func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil || e.Operation() == jetstream.KeyValuePut {
					continue
				}
				for _, s := range a.slotList() {
					if farm.Key(s.reg.ID) == e.Key() && s.playground != nil && s.sessions.Load() > 0 {
						a.log.Info("the lease of a playground session ended: closing it", "device", s.reg.ID)
						// The playground's own route ends its session (and
						// the phone's driver); it is local, so no fence.
						end, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "/session", http.NoBody)
						end.Host, end.RemoteAddr = "127.0.0.1", "127.0.0.1:0"
						s.playground.ServeHTTP(discard{http.Header{}}, end)
					}
				}
			}
		}
	})
	return nil
}

// discard is a ResponseWriter for answers no one reads.
type discard struct{ header http.Header }

func (d discard) Header() http.Header       { return d.header }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
