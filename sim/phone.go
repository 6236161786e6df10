package sim

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/apexagent/apex/sim/adbd"
)

// Clock tells the phone the time; tests inject a fake one so delayed
// elements and toasts need no sleeping.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Options configure a phone. The zero value is a 1080×2400 phone at 420 dpi
// with the built-in apps.
type Options struct {
	Serial  string
	Model   string
	Width   int
	Height  int
	Density int
	// Apps are installed beyond the built-ins; an app with a built-in's
	// package replaces it.
	Apps  []*AppSpec
	Seed  int64
	Clock Clock
	Log   *slog.Logger
	// Platform is "android" (the default) or "ios": an iPhone of 1170×2532
	// px at scale 3 (see ios.go) whose face is the XCUITest tree.
	Platform string
}

// Phone is a simulated phone: Android by default, or an iPhone (see
// Options.Platform) whose face is the XCUITest tree. All methods are safe
// for concurrent use; each takes the phone's lock for its whole duration.
type Phone struct {
	mu         sync.Mutex
	log        *slog.Logger
	clock      Clock
	serial     string
	model      string
	w, h       int // the screen as laid out now (swapped in landscape)
	natW, natH int // the screen in its natural (portrait) orientation
	rotation   int // Surface.ROTATION_0…270 as 0…3
	density    int
	props      map[string]string
	apps       map[string]*appRun
	order      []string // install order, for the launcher
	pkgs       map[string]adbd.Package
	removed    map[string]*AppSpec // uninstalled built-ins, for install-existing
	aliases    map[string]string   // other package names of installed apps (AppSpec.Aliases)
	fg         string              // foreground package
	recents    []string
	inOverview bool
	awake      bool
	locked     bool
	toast      string
	toastEnd   time.Time
	settings   map[string]map[string]string
	logcat     *logBuffer
	nextPID    int
	seed       int64
	rnd        *rand.Rand
	version    uint64        // bumped on every change of what is on screen
	watch      chan struct{} // closed at the next change (screenwatch.go)
	shot       shotCache
	stale      staleTree // see stale.go
	ios        bool
	hw         hardware // see settings.go
}

var _ adbd.Phone = (*Phone)(nil)

// Launcher is the home screen's package.
const Launcher = "com.apex.launcher"

// NewPhone starts a phone showing the home screen.
func NewPhone(opts Options) (*Phone, error) {
	p := &Phone{
		log:     opts.Log,
		clock:   opts.Clock,
		serial:  opts.Serial,
		model:   opts.Model,
		w:       opts.Width,
		h:       opts.Height,
		density: opts.Density,
		apps:    map[string]*appRun{},
		pkgs:    map[string]adbd.Package{},
		removed: map[string]*AppSpec{},
		aliases: map[string]string{},
		awake:   true,
		hw:      hardware{level: 100, charging: true},
		nextPID: 3100,
		seed:    opts.Seed,
		rnd:     rand.New(rand.NewPCG(uint64(opts.Seed), 0x5eed)),
	}
	if p.log == nil {
		p.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := p.applyPlatform(opts.Platform); err != nil {
		return nil, err
	}
	if p.clock == nil {
		p.clock = realClock{}
	}
	if p.serial == "" {
		p.serial = "apexsim0001"
	}
	if p.model == "" {
		p.model = "Apex Sim"
	}
	if p.w == 0 && p.h == 0 {
		p.w, p.h = 1080, 2400
	}
	if p.density == 0 {
		p.density = 420
	}
	if p.w < 240 || p.h < 320 || p.w > 4096 || p.h > 8192 {
		return nil, fmt.Errorf("sim: new phone: screen %dx%d out of range (240x320 to 4096x8192)", p.w, p.h)
	}
	if p.density < 120 || p.density > 960 {
		return nil, fmt.Errorf("sim: new phone: density %d out of range (120 to 960 dpi)", p.density)
	}
	p.natW, p.natH = p.w, p.h
	p.logcat = newLogBuffer(p.clock)
	p.props = defaultProps(p.model, p.serial)
	p.settings = defaultSettings(p.model)
	specs, err := builtins()
	if err != nil {
		return nil, err
	}
	specs = slices.Clone(specs)
	for _, s := range opts.Apps {
		if s == nil {
			return nil, fmt.Errorf("sim: new phone: nil app spec")
		}
		specs = slices.DeleteFunc(specs, func(b *AppSpec) bool { return b.Package == s.Package })
		specs = append(specs, s)
	}
	for _, s := range specs {
		p.installSpec(s)
	}
	if p.apps[Launcher] == nil {
		return nil, fmt.Errorf("sim: new phone: no launcher app (%s) installed", Launcher)
	}
	p.logcat.add(p.nextPID, "I", "ActivityManager", "System now ready")
	p.launch(Launcher)
	return p, nil
}

func (p *Phone) installSpec(s *AppSpec) {
	if _, ok := p.apps[s.Package]; !ok {
		p.order = append(p.order, s.Package)
	}
	p.apps[s.Package] = newAppRun(s, p.seed)
	p.pkgs[s.Package] = adbd.Package{Name: s.Package, Label: s.Label, Version: s.Version,
		LauncherActivity: s.Activity, System: s.System, Aliases: s.Aliases}
	for _, a := range s.Aliases {
		p.aliases[a] = s.Package
	}
}

func defaultProps(model, serial string) map[string]string {
	return map[string]string{
		"ro.product.model":             model,
		"ro.product.brand":             "Apex",
		"ro.product.manufacturer":      "Apex",
		"ro.product.name":              "apex_sim",
		"ro.product.device":            "apex_sim",
		"ro.product.board":             "apex",
		"ro.product.cpu.abi":           "x86_64",
		"ro.product.locale":            "en-US",
		"ro.build.version.release":     "14",
		"ro.build.version.sdk":         "34",
		"ro.build.version.codename":    "REL",
		"ro.build.version.incremental": "11228894",
		"ro.build.id":                  "UQ1A.240205.004",
		"ro.build.type":                "user",
		"ro.build.tags":                "release-keys",
		"ro.build.characteristics":     "default",
		"ro.build.fingerprint":         "apex/apex_sim/apex_sim:14/UQ1A.240205.004/11228894:user/release-keys",
		"ro.serialno":                  serial,
		"ro.boot.serialno":             serial,
		"ro.hardware":                  "apex",
		"ro.kernel.qemu":               "0",
		"ro.debuggable":                "0",
		"ro.secure":                    "1",
		"ro.sf.lcd_density":            "420",
		"persist.sys.locale":           "en-US",
		"persist.sys.timezone":         "UTC",
		"sys.boot_completed":           "1",
		"dev.bootcomplete":             "1",
		"init.svc.bootanim":            "stopped",
		"service.bootanim.exit":        "1",
	}
}

func defaultSettings(model string) map[string]map[string]string {
	return map[string]map[string]string{
		"global": {"device_name": model, "wifi_on": "1", "bluetooth_on": "0", "airplane_mode_on": "0",
			"adb_enabled": "1", "development_settings_enabled": "1", "window_animation_scale": "1.0",
			"transition_animation_scale": "1.0", "animator_duration_scale": "1.0", "mobile_data": "1"},
		"secure": {"default_input_method": "com.apex.ime/.Keyboard", "android_id": "5eedc0ffee123456",
			"enabled_input_methods": "com.apex.ime/.Keyboard", "ui_night_mode": "1"},
		"system": {"screen_brightness": "128", "screen_off_timeout": "600000", "font_scale": "1.0",
			"user_rotation": "0", "accelerometer_rotation": "0"},
	}
}

// Props returns a copy of the system properties.
func (p *Phone) Props() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := maps.Clone(p.props)
	m["ro.sf.lcd_density"] = fmt.Sprint(p.density)
	return m
}

// Display returns the physical screen size in pixels (in the natural,
// portrait orientation, as `wm size` reports it) and the density in dpi.
func (p *Phone) Display() (width, height, density int) { return p.natW, p.natH, p.density }

// Serial is the phone's serial number.
func (p *Phone) Serial() string { return p.serial }

// Packages lists the installed packages in install order.
func (p *Phone) Packages() []adbd.Package {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]adbd.Package, 0, len(p.order))
	for _, name := range p.order {
		out = append(out, p.pkgs[name])
	}
	return out
}

// Install registers a package. A package without an app spec opens a plain
// screen showing its label.
func (p *Phone) Install(pkg adbd.Package) error {
	if !packagePattern().MatchString(pkg.Name) {
		return fmt.Errorf("sim: install: invalid package name %q", pkg.Name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if pkg.Label == "" {
		pkg.Label = pkg.Name
	}
	if pkg.LauncherActivity == "" {
		pkg.LauncherActivity = ".MainActivity"
	}
	if pkg.Version == "" {
		pkg.Version = "1.0"
	}
	if old, ok := p.apps[pkg.Name]; ok && old.spec.File != "installed" {
		// Reinstalling a spec'd app keeps its UI; only the metadata changes.
		p.pkgs[pkg.Name] = pkg
		return nil
	}
	spec := placeholderSpec(pkg)
	if _, ok := p.apps[pkg.Name]; !ok {
		p.order = append(p.order, pkg.Name)
	}
	p.apps[pkg.Name] = newAppRun(spec, p.seed)
	p.pkgs[pkg.Name] = pkg
	p.logcat.add(1000, "I", "PackageManager", "Package "+pkg.Name+" installed")
	p.changed()
	return nil
}

func placeholderSpec(pkg adbd.Package) *AppSpec {
	return &AppSpec{Package: pkg.Name, Label: pkg.Label, Version: pkg.Version, Activity: pkg.LauncherActivity,
		File: "installed", Start: "main",
		Screens: []*Screen{{ID: "main", Title: pkg.Label, Elements: []*Element{
			{Type: KindText, ID: "message", Text: pkg.Label + " is installed."},
		}}}}
}

// State returns a copy of an app's state and session variables, for tests
// that check outcomes (cart contents, settings, notes).
func (p *Phone) State(pkg string) (map[string]any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.apps[p.resolve(pkg)]
	if !ok {
		return nil, fmt.Errorf("sim: state of %s: %w", pkg, adbd.ErrUnknownPackage)
	}
	out := deepCopy(a.state).(map[string]any)
	for k, v := range a.session {
		out[k] = deepCopy(v)
	}
	return out, nil
}

// Setting reads a value of the settings provider.
func (p *Phone) Setting(namespace, key string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.settings[namespace][key]
	return v, ok
}

// PutSetting writes a value of the settings provider.
func (p *Phone) PutSetting(namespace, key, value string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.settings[namespace] == nil {
		p.settings[namespace] = map[string]string{}
	}
	p.settings[namespace][key] = value
	if namespace == "system" && (key == "user_rotation" || key == "accelerometer_rotation") {
		p.applyRotation()
	}
	p.changed()
}

// Settings returns a copy of one namespace of the settings provider.
func (p *Phone) Settings(namespace string) map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.settings[namespace])
}

// DeleteSetting removes a value of the settings provider.
func (p *Phone) DeleteSetting(namespace, key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.settings[namespace][key]
	delete(p.settings[namespace], key)
	return ok
}

// Logcat returns the log so far in `logcat -d` threadtime form.
func (p *Phone) Logcat() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logcat.lines()
}

// Awake reports whether the screen is on.
func (p *Phone) Awake() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.awake
}

// Locked reports whether the keyguard shows.
func (p *Phone) Locked() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.locked
}

// KeyboardShown reports whether the soft keyboard is up.
func (p *Phone) KeyboardShown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keyboardShown()
}

func (p *Phone) keyboardShown() bool {
	a := p.apps[p.fg]
	return p.awake && !p.locked && a != nil && a.focus != "" && !a.imeHidden
}

// hideIME hides the keyboard: on Android the field keeps its focus (the
// dump still says focused, typing still goes there), as the IME window
// closes but the view stays focused; an iPhone's field resigns.
func (p *Phone) hideIME(a *appRun) {
	if p.ios {
		a.focus = ""
	} else {
		a.imeHidden = true
	}
	p.changed()
}

// Foreground returns the package and activity on screen.
func (p *Phone) Foreground() (pkg, activity string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.apps[p.fg]
	if a == nil {
		return "", ""
	}
	return p.fg, p.activity(a)
}

func (p *Phone) activity(a *appRun) string {
	if t := a.top(); t != nil && t.spec.Activity != "" {
		return t.spec.Activity
	}
	return a.spec.Activity
}

func (p *Phone) changed() { p.version++; p.notifyWatchers() }
