//go:build !apexlite

package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/adb"
	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/android"
	"github.com/apexagent/apex/device/hub"
	"github.com/apexagent/apex/device/ios"
)

// openDoDevice opens the device `apex do` acts on: the one the device
// flags choose, or with --session the device of that agent session, which
// its opener (apex mcp --profile device-hub) holds the lease of.
func openDoDevice(ctx context.Context, env *Env, opts *DoOptions) (device.Driver, device.Target, func(), error) {
	if opts.Session == "" {
		return openDevice(ctx, env, &opts.Device)
	}
	f := opts.Device
	if f.ID != "" || f.Sim || f.Farm != "" || len(f.Apps) > 0 {
		return nil, device.Target{}, nil, fmt.Errorf("--session names the device: leave out --device, --sim, --app and --farm")
	}
	s, err := hub.LoadAgentSession(hub.AgentDir(), opts.Session)
	if err != nil {
		return nil, device.Target{}, nil, err
	}
	var d device.Driver
	switch s.Connect.Kind {
	case "adbd":
		d, err = android.OpenDirect(ctx, s.Connect.Addr, &android.Options{Log: env.Log})
	case "adb":
		var c *adb.Client
		if c, err = adb.NewClient(&adb.Options{Log: env.Log}); err == nil {
			d, err = android.OpenWith(ctx, c.Device(s.Connect.Addr), s.Connect.Addr, &android.Options{Log: env.Log})
		}
	case "wda":
		d, err = ios.Open(ctx, s.Connect.Addr, &ios.Options{Log: env.Log})
	default:
		err = fmt.Errorf("session %s: unknown connection %q", s.ID, s.Connect.Kind)
	}
	if err != nil {
		return nil, device.Target{}, nil, fmt.Errorf("session %s: open %s: %w", s.ID, s.Target.ID, err)
	}
	return d, s.Target, func() { d.Close() }, nil
}

// noteSessionApp records an app launched in an agent session, which
// device_close then exits.
func noteSessionApp(opts *DoOptions, a *action.Action, raw json.RawMessage) error {
	if opts.Session == "" || a.Name() != action.Launch.Name() {
		return nil
	}
	p, err := a.Decode(raw)
	if err != nil {
		return nil // it ran: its params decoded then
	}
	return hub.AddAgentApp(hub.AgentDir(), opts.Session, p.(*action.AppParams).App)
}
