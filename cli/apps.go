//go:build !apexlite

package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/apexagent/apex/device"
	"github.com/apexagent/apex/sim"
)

// simApps are the packages of the apps a phone --sim starts has: the
// built-ins and those of the --app specs.
func simApps(specs []string) []string {
	var pkgs []string
	for _, a := range sim.BuiltinApps() {
		pkgs = append(pkgs, a.Package)
	}
	for _, f := range specs {
		if p := specPackage(f); p != "" {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs
}

// specPackage is the package an app spec file declares, or "".
func specPackage(file string) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	spec, err := sim.ParseApp(data, file)
	if err != nil {
		return ""
	}
	return spec.Package
}

// appSpecDirs are where app specs are looked for, relative to the working
// directory, when a simulated phone lacks an app.
var appSpecDirs = []string{filepath.Join("examples", "apps"), "apps", "."}

// findAppSpec is the app spec file near the working directory that
// declares pkg, or "".
func findAppSpec(pkg string) string {
	for _, dir := range appSpecDirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, f := range files {
			if specPackage(f) == pkg {
				return f
			}
		}
	}
	return ""
}

// launchError says what to do about an app that did not start. On a
// phone --sim started in this process, an app that is not installed is
// one to add with --app (adb cannot install it there); the error lists the
// apps the phone has and names the spec that declares it when one is
// near.
func launchError(t device.Target, f *DeviceFlags, app string, err error) error {
	if !f.Sim || !errors.Is(err, device.ErrNotFound) {
		return fmt.Errorf("launch %s on %s: %w", app, t.ID, err)
	}
	hint := "add its app spec with --app FILE.yaml (docs/sim-apps.md)"
	if spec := findAppSpec(app); spec != "" {
		hint = "add it with --app " + spec
	}
	return fmt.Errorf("launch %s: the simulated phone has no such app (it has %s); %s", app, strings.Join(simApps(f.Apps), ", "), hint)
}
