//go:build !apexlite

package cli

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/apexagent/apex/device/ios"
	"github.com/apexagent/apex/internal/httpguard"
	"github.com/apexagent/apex/wda"
)

// checkClientWDA refuses a wda:URL device id a playground client sends
// unless the URL is one the operator configured (--device, apex.yaml's
// wda: section, $APEX_WDA_URLS), or, with --allow-wda-any, on loopback:
// the playground would otherwise fetch any URL a client names (and its
// network reaches what the client's does not).
func checkClientWDA(id string, flags DeviceFlags, allowAny bool) error {
	raw, ok := strings.CutPrefix(id, wdaPrefix)
	if !ok {
		return nil
	}
	u, err := wda.ParseURL(raw)
	if err != nil {
		return err
	}
	configured, err := configuredWDAURLs()
	if err != nil {
		return err
	}
	configured = append(configured, ios.URLsFromEnv(os.Getenv)...)
	if own, ok := strings.CutPrefix(flags.ID, wdaPrefix); ok {
		configured = append(configured, own)
	}
	want := ios.Serial(raw)
	for _, c := range configured {
		if ios.Serial(c) == want {
			return nil
		}
	}
	if allowAny && loopbackURL(u) {
		return nil
	}
	hint := "list it under wda: urls: in apex.yaml or in $" + ios.EnvURLs + ", or start the playground with --device " + id
	if httpguard.Loopback(u.Host) {
		hint += " (or --allow-wda-any for any WebDriverAgent on loopback)"
	}
	return fmt.Errorf("device %q refused: the playground opens only WebDriverAgent URLs its operator configured: %s", id, hint)
}

func loopbackURL(u *url.URL) bool {
	return u.User == nil && u.Fragment == "" && httpguard.Loopback(u.Host)
}
