//go:build !apexlite

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/farm"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/registry"
)

// openFarmDevice leases a farm device (--farm) and drives it through its
// host: the one named by --device (its ID or a unique part), else the
// first free one. Every call carries the lease's fence, and the host
// refuses calls once the lease is lost. The returned func ends the session
// and releases the lease.
func openFarmDevice(ctx context.Context, env *Env, f *DeviceFlags) (device.Driver, device.Target, func(), error) {
	if f.Sim {
		return nil, device.Target{}, nil, errors.New("--farm and --sim both given: use one")
	}
	c, err := dialFarm(ctx, f)
	if err != nil {
		return nil, device.Target{}, nil, err
	}
	devs, err := c.reg.Devices(ctx)
	if err != nil {
		c.Close()
		return nil, device.Target{}, nil, err
	}
	candidates := farmCandidates(devs, f.ID)
	if len(candidates) == 0 {
		c.Close()
		return nil, device.Target{}, nil, fmt.Errorf("no farm device matches %q (see apex farm devices --farm %s)", f.ID, f.Farm)
	}
	h := &farmDevices{c: c, command: f.command()}
	deadline := time.Now().Add(f.Wait)
	for {
		var held error
		for _, d := range candidates {
			drv, err := h.Open(ctx, d.ID)
			if errors.Is(err, lease.ErrHeld) {
				held = err
				continue
			}
			if err != nil {
				c.Close()
				return nil, device.Target{}, nil, err
			}
			return drv, d.Target(), func() { drv.Close(); c.Close() }, nil
		}
		if !time.Now().Before(deadline) {
			c.Close()
			return nil, device.Target{}, nil, fmt.Errorf("%w: wait for it with --wait-device DURATION, or pick another device", held)
		}
		farm.Sleep(ctx, 500*time.Millisecond)
		if ctx.Err() != nil {
			c.Close()
			return nil, device.Target{}, nil, ctx.Err()
		}
	}
}

// dialFarm connects to the farm f names (--farm, its token, the CA of a
// farm serving TLS).
func dialFarm(ctx context.Context, f *DeviceFlags) (*farmClient, error) {
	ff := farmFlags{URL: f.Farm, Token: f.FarmToken, CA: os.Getenv(FarmCAEnv)}
	return ff.dial(ctx, "apex "+f.command())
}

// farmCandidates are the ready devices query names: its exact ID (also
// as farmDevices lists it, "farm/<device>"), or every device whose ID
// contains it.
func farmCandidates(devs []registry.Device, query string) []registry.Device {
	query = strings.TrimPrefix(query, (&farmDevices{}).Name()+"/")
	var out []registry.Device
	for _, d := range devs {
		if d.Health.State != "device" && d.Health.State != "ready" {
			continue
		}
		if d.ID == query {
			return []registry.Device{d}
		}
		if strings.Contains(d.ID, query) {
			out = append(out, d)
		}
	}
	return out
}
