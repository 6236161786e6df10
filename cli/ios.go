package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/device/ios"
)

// wdaPrefix marks a --device value that is a WebDriverAgent URL
// (--device wda:http://127.0.0.1:8100), opened without listing hosts.
const wdaPrefix = "wda:"

// wdaHost is the iPhones of the WebDriverAgent URLs in apex.yaml's wda:
// section (the apex.yaml the other commands find) and in APEX_WDA_URLS.
func wdaHost(env *Env) (*ios.Host, error) {
	urls, err := configuredWDAURLs()
	if err != nil {
		return nil, err
	}
	return ios.NewHost(append(urls, ios.URLsFromEnv(os.Getenv)...), &ios.HostOptions{Log: env.Log, Driver: &ios.Options{Log: env.Log}})
}

// configuredWDAURLs are the URLs of the wda: section of the apex.yaml
// discovery finds (none without one).
func configuredWDAURLs() ([]string, error) {
	file, _ := configFile("", os.Getenv)
	if file == "" {
		return nil, nil
	}
	return wdaURLsFromConfig(file)
}

// wdaTarget is the iPhone a --device wda:URL names.
func wdaTarget(rawURL string) device.Target {
	serial := ios.Serial(rawURL)
	return device.Target{ID: device.QualifiedID("wda", serial), Host: "wda", Serial: serial, Platform: device.IOS, State: "ready"}
}

// openWDA opens the WebDriverAgent a --device wda:URL names.
func openWDA(ctx context.Context, env *Env, rawURL string) (device.Driver, error) {
	d, err := ios.Open(ctx, rawURL, &ios.Options{Log: env.Log})
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, ios.Hint(rawURL))
	}
	return d, nil
}

// simFlag is --sim: a bool that also takes the platform to simulate
// (--sim, --sim=android, --sim=ios).
type simFlag struct {
	on       *bool
	platform *string
}

func (s simFlag) String() string {
	if s.on == nil || !*s.on {
		return "false"
	}
	if *s.platform != "" {
		return *s.platform
	}
	return "true"
}

func (s simFlag) Set(v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "android":
		*s.on, *s.platform = true, ""
		if strings.EqualFold(v, "android") {
			*s.platform = "android"
		}
	case "ios", "iphone":
		*s.on, *s.platform = true, "ios"
	case "false", "0":
		*s.on, *s.platform = false, ""
	default:
		return fmt.Errorf("%q: use --sim (an Android phone), --sim=android or --sim=ios", v)
	}
	return nil
}

func (s simFlag) Type() string { return "bool" }
