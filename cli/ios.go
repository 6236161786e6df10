//go:build !apexlite

package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/ios"
)

// wdaHost is the iPhones of the WebDriverAgent URLs in apex.yaml's wda:
// section (the apex.yaml the other commands find) and in APEX_WDA_URLS.
func wdaHost(env *Env) (device.Host, error) {
	urls, err := configuredWDAURLs()
	if err != nil {
		return nil, err
	}
	h, err := ios.NewHost(append(urls, ios.URLsFromEnv(os.Getenv)...), &ios.HostOptions{Log: env.Log, Driver: &ios.Options{Log: env.Log}})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// wdaDevice is the iPhone a --device wda:URL names, and how to open it.
func wdaDevice(ctx context.Context, env *Env, rawURL string) (device.Target, func() (device.Driver, error), error) {
	serial := ios.Serial(rawURL)
	t := device.Target{ID: device.QualifiedID("wda", serial), Host: "wda", Serial: serial, Platform: device.IOS, State: "ready"}
	return t, func() (device.Driver, error) {
		d, err := ios.Open(ctx, rawURL, &ios.Options{Log: env.Log})
		if err != nil {
			return nil, fmt.Errorf("%w\n%s", err, ios.Hint(rawURL))
		}
		return d, nil
	}, nil
}
