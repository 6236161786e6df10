//go:build !apexlite

package cli

import (
	"context"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/farm/lease"
	"github.com/apexagent/apex/farm/remote"
)

// farmDevices offers a farm's devices as a device.Host (apex mcp --farm):
// it lists the farm's ready devices, and opening one leases it; closing
// the driver releases the lease. Every call travels to the device's host
// with the lease's fence.
type farmDevices struct {
	c       *farmClient
	command string // what holds the lease, e.g. "apex run"
}

var _ device.Host = (*farmDevices)(nil)

func (h *farmDevices) Name() string { return "farm" }

func (h *farmDevices) Targets(ctx context.Context) ([]device.Target, error) {
	devs, err := h.c.reg.Devices(ctx)
	if err != nil {
		return nil, err
	}
	var out []device.Target
	for _, d := range farmCandidates(devs, "") {
		t := d.Target()
		t.ID, t.Host, t.Serial = device.QualifiedID(h.Name(), d.ID), h.Name(), d.ID
		out = append(out, t)
	}
	return out, nil
}

// Open leases farm device id through the farm API, which checks that the
// caller drives the device's project (lease.ErrHeld while someone else
// holds it).
func (h *farmDevices) Open(ctx context.Context, id string) (device.Driver, error) {
	l, err := h.c.api.Lease(ctx, id, "", h.command)
	if err != nil {
		return nil, err
	}
	return &leasedDriver{Driver: remote.NewDriver(h.c.nc, id, l.Record()), lease: l}, nil
}

// leasedDriver is a farm device's remote driver that releases its lease
// when closed.
type leasedDriver struct {
	*remote.Driver
	lease *lease.Lease
}

func (d *leasedDriver) Close() error {
	err := d.Driver.Close()
	d.lease.Release(context.Background())
	return err
}
