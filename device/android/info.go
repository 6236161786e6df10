package android

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/internal/lazy"
)

// infoCmd asks for everything Info needs in one round trip; the markers
// keep an empty getprop line from shifting the rest.
const infoCmd = `echo "model=$(getprop ro.product.model)"; echo "release=$(getprop ro.build.version.release)"; wm size; wm density`

// Info reports model, OS version and the display as screenshots see it
// (an override size or density, when set, wins over the physical one).
func (d *Driver) Info(ctx context.Context) (device.Info, error) {
	var info device.Info
	err := d.call(ctx, "info", true, d.opts.Timeout, func(ctx context.Context) error {
		out, err := d.shell(ctx, infoCmd)
		if err != nil {
			return err
		}
		info, err = parseInfo(out)
		return err
	})
	info.ID = d.serial
	info.Platform = device.Android
	return info, err
}

var (
	sizeRe    = lazy.Regexp(`(Physical|Override) size:\s*(\d+)x(\d+)`)
	densityRe = lazy.Regexp(`(Physical|Override) density:\s*(\d+)`)
)

func parseInfo(out string) (device.Info, error) {
	var info device.Info
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "model="); ok {
			info.Model = v
		}
		if v, ok := strings.CutPrefix(line, "release="); ok {
			info.OSVersion = v
		}
		if m := sizeRe().FindStringSubmatch(line); m != nil && (info.Width == 0 || m[1] == "Override") {
			info.Width, _ = strconv.Atoi(m[2])
			info.Height, _ = strconv.Atoi(m[3])
		}
		if m := densityRe().FindStringSubmatch(line); m != nil && (info.Density == 0 || m[1] == "Override") {
			info.Density, _ = strconv.Atoi(m[2])
		}
	}
	if info.Width == 0 || info.Height == 0 {
		return info, fmt.Errorf("`wm size` gave no size in %q", out)
	}
	return info, nil
}
