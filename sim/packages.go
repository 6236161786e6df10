package sim

import (
	"errors"
	"fmt"
	"slices"

	"github.com/apexagent/apex/sim/adbd"
)

// ErrSystemApp is returned for a change the home screen app refuses.
var ErrSystemApp = errors.New("the home screen app cannot be removed")

// ResetApp returns an app to its spec's initial state, as `pm clear` does:
// the process is killed, state, session and back stack are those of a
// fresh install, and its seeded popups start over.
func (p *Phone) ResetApp(pkg string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.apps[pkg]
	if !ok {
		return fmt.Errorf("sim: reset %s: %w", pkg, adbd.ErrUnknownPackage)
	}
	if a.running {
		p.kill(a)
	}
	p.apps[pkg] = newAppRun(a.spec, p.seed)
	p.logcat.add(1000, "I", "ActivityManager", "Clearing application data of "+pkg)
	if pkg == Launcher {
		p.launch(Launcher)
	}
	p.changed()
	return nil
}

// Uninstall removes an app and its data. A built-in app can be brought
// back with InstallExisting (`cmd package install-existing`), fresh.
func (p *Phone) Uninstall(pkg string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.apps[pkg]
	if !ok {
		return fmt.Errorf("sim: uninstall %s: %w", pkg, adbd.ErrUnknownPackage)
	}
	if pkg == Launcher {
		return fmt.Errorf("sim: uninstall %s: %w", pkg, ErrSystemApp)
	}
	if a.running {
		p.kill(a)
	}
	delete(p.apps, pkg)
	delete(p.pkgs, pkg)
	p.order = slices.DeleteFunc(p.order, func(s string) bool { return s == pkg })
	if a.spec.File != "installed" {
		p.removed[pkg] = a.spec
	}
	p.logcat.add(1000, "I", "PackageManager", "Package "+pkg+" uninstalled")
	p.changed()
	return nil
}

// InstallExisting reinstalls a built-in app that was uninstalled, with its
// initial state.
func (p *Phone) InstallExisting(pkg string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.apps[pkg]; ok {
		return nil
	}
	spec, ok := p.removed[pkg]
	if !ok {
		return fmt.Errorf("sim: install-existing %s: %w", pkg, adbd.ErrUnknownPackage)
	}
	delete(p.removed, pkg)
	p.installSpec(spec)
	p.logcat.add(1000, "I", "PackageManager", "Package "+pkg+" installed for user 0")
	p.changed()
	return nil
}
