package host

import (
	"context"
	"fmt"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/registry"
	"github.com/apexagent/apex/farm/remote"
)

// slotList is the devices served now.
func (a *Agent) slotList() []*slot {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*slot(nil), a.slots...)
}

// addSlots starts serving slots: registers them, answers remote calls to
// them (each checked against its lease's fence) and pulls runs for them.
func (a *Agent) addSlots(ctx context.Context, slots []*slot) error {
	if len(slots) == 0 {
		return nil
	}
	if a.o.Playground != nil {
		for _, s := range slots {
			s.playground = a.o.Playground(s.reg, s.openTarget)
		}
	}
	a.mu.Lock()
	a.slots = append(a.slots, slots...)
	a.mu.Unlock()
	if err := a.beat(ctx); err != nil {
		return fmt.Errorf("host: register: %w", err)
	}
	// Faces elsewhere (apex run --farm, …) drive a device they lease
	// through calls to this host.
	openers := map[string]remote.Opener{}
	for _, s := range slots {
		openers[s.reg.ID] = func(ctx context.Context) (device.Driver, func(), error) { return s.open(ctx, nil, nil) }
	}
	if err := remote.Serve(ctx, a.js.Conn(), a.leases, openers, a.log); err != nil {
		return fmt.Errorf("host: %w", err)
	}
	// The console's front door reaches each device's playground the same way.
	if a.o.Playground != nil {
		for _, s := range slots {
			if err := remote.ServeHTTP(ctx, a.js.Conn(), a.leases, s.reg.ID, s.playground, a.log); err != nil {
				return fmt.Errorf("host: %w", err)
			}
		}
	}
	for _, s := range slots {
		a.wg.Go(func() { a.serve(ctx, s) })
	}
	return nil
}

// relist lists the real devices again every Options.Relist: one plugged in
// since gets a slot; one gone (or not ready) is registered offline and
// takes no runs until it is back.
func (a *Agent) relist(ctx context.Context) {
	every := a.o.Relist
	if every <= 0 {
		every = 5 * time.Second
	}
	farm.Every(ctx, every, func() {
		found, err := hostSlots(ctx, a.o.ID, a.o.Devices, a.o.Labels)
		if err != nil {
			a.log.Debug("relist devices", "err", err)
		}
		ready := map[string]*slot{}
		for _, s := range found {
			ready[s.reg.ID] = s
		}
		changed := false
		for _, s := range a.slotList() {
			if !s.real {
				continue
			}
			_, ok := ready[s.reg.ID]
			if s.offline.Swap(!ok) != !ok {
				changed = true
				a.log.Info("device "+map[bool]string{true: "back", false: "gone"}[ok], "device", s.reg.ID)
			}
			delete(ready, s.reg.ID)
		}
		var added []*slot
		for _, s := range found {
			if _, ok := ready[s.reg.ID]; ok {
				added = append(added, s)
				a.log.Info("device plugged in", "device", s.reg.ID)
			}
		}
		if err := a.addSlots(ctx, added); err != nil {
			a.log.Warn("serve new devices", "err", err)
		}
		if changed {
			if err := a.beat(ctx); err != nil {
				a.log.Warn("heartbeat failed", "err", err)
			}
		}
	})
}

// registration is the slot's entry in the registry: offline while its
// device is gone.
func (s *slot) registration() registry.Device {
	d := s.reg
	if s.offline.Load() {
		d.Health.State = "offline"
		d.Health.LastError = "not listed by the host's device hosts (unplugged?)"
	}
	return d
}
