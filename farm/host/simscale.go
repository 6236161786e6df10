package host

import (
	"context"
	"slices"
	"time"

	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/queue"
)

// scaleSims boots simulated phones past Options.Sim, up to SimMax, while
// queued runs a phone of this host could take outnumber its free ones,
// and shuts down a phone so booted once it has been idle SimIdle with no
// run waiting. A phone that is leased (a remote session) is not idle.
func (a *Agent) scaleSims(ctx context.Context, boot func(int) *slot) {
	every := a.o.Relist
	if every <= 0 {
		every = 5 * time.Second
	}
	idleFor := a.o.SimIdle
	if idleFor <= 0 {
		idleFor = 30 * time.Second
	}
	idleSince := map[*slot]time.Time{}
	farm.Every(ctx, every, func() {
		runs, err := a.q.List(ctx)
		if err != nil {
			a.log.Debug("scale simulated phones: list runs", "err", err)
			return
		}
		var sims []*slot
		for _, s := range a.slotList() {
			if s.sim {
				sims = append(sims, s)
			}
		}
		free := 0
		for _, s := range sims {
			if !s.busy.Load() {
				free++
			}
		}
		waiting := 0
		for _, r := range runs {
			if r.State == queue.Queued && r.Pin == "" && !slices.Contains(r.Avoid, a.o.ID) && sims[0].reg.Matches(r.Labels) {
				waiting++
			}
		}
		if n := min(waiting-free, a.o.SimMax-len(sims)); n > 0 {
			used := map[string]bool{}
			for _, s := range sims {
				used[s.reg.ID] = true
			}
			var added []*slot
			for i := 0; len(added) < n; i++ {
				s := boot(i)
				if used[s.reg.ID] {
					continue
				}
				sctx, stop := context.WithCancel(ctx)
				s.stop = stop
				if err := a.addSlots(sctx, []*slot{s}); err != nil {
					stop()
					a.log.Warn("boot a simulated phone", "device", s.reg.ID, "err", err)
					break
				}
				added = append(added, s)
			}
			a.log.Info("booted simulated phones for queued runs", "booted", len(added), "waiting", waiting, "free", free)
			return
		}
		now := time.Now()
		for _, s := range sims {
			if s.stop == nil || s.busy.Load() || waiting > 0 {
				delete(idleSince, s)
				continue
			}
			if _, held, _ := a.leases.Current(ctx, s.reg.ID); held {
				delete(idleSince, s)
				continue
			}
			if _, ok := idleSince[s]; !ok {
				idleSince[s] = now
				continue
			}
			if now.Sub(idleSince[s]) >= idleFor {
				delete(idleSince, s)
				a.shutSim(ctx, s)
			}
		}
	})
}

// shutSim stops serving a simulated phone booted past Options.Sim; its
// registration lapses.
func (a *Agent) shutSim(ctx context.Context, s *slot) {
	a.mu.Lock()
	a.slots = slices.DeleteFunc(a.slots, func(x *slot) bool { return x == s })
	a.mu.Unlock()
	s.stop()
	a.log.Info("shut down an idle simulated phone", "device", s.reg.ID)
	if err := a.beat(ctx); err != nil {
		a.log.Warn("heartbeat failed", "err", err)
	}
}
