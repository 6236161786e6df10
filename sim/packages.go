package sim

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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
	pkg = p.resolve(pkg)
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
	pkg = p.resolve(pkg)
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
	for _, al := range a.spec.Aliases {
		delete(p.aliases, al)
	}
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
	if _, ok := p.apps[p.resolve(pkg)]; ok {
		return nil
	}
	for _, s := range p.removed {
		if slices.Contains(s.Aliases, pkg) {
			pkg = s.Package
		}
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

// resolve maps an alias (AppSpec.Aliases) to its package name.
func (p *Phone) resolve(pkg string) string {
	if real, ok := p.aliases[pkg]; ok {
		return real
	}
	return pkg
}

// ErrNoHandler is returned for a URI no installed app opens.
var ErrNoHandler = errors.New("no app opens this URI")

// View opens a URI the way a VIEW intent does: the app whose links list
// the URI's scheme cold-starts at its start screen with the URI in its
// links variable. It returns the package that opened it.
func (p *Phone) View(uri string) (string, error) {
	scheme, _, ok := strings.Cut(uri, ":")
	if !ok {
		return "", fmt.Errorf("sim: view %q: %w (a URI has a scheme, like https:)", uri, ErrNoHandler)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pkg := range p.order {
		a := p.apps[pkg]
		l := a.spec.Links
		if l == nil || !slices.Contains(l.Schemes, strings.ToLower(scheme)) {
			continue
		}
		if a.running {
			p.kill(a)
		}
		a.session[l.Bind] = uri
		p.wake()
		p.launch(pkg)
		return pkg, nil
	}
	return "", fmt.Errorf("sim: view %q: %w", uri, ErrNoHandler)
}
