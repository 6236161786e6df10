package adbd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

func init() {
	commands["pm"] = cmdPm
}

// systemPackages are present on every simulated phone besides the apps
// the Phone provides: the framework, the shell, and the ADBKeyBoard IME
// (whose broadcasts adbd answers; see cmdAm).
var systemPackages = []Package{
	{Name: "android", Label: "Android System", Version: "14", System: true},
	{Name: "com.android.shell", Label: "Shell", Version: "14", System: true},
	{Name: "com.android.systemui", Label: "System UI", Version: "14", System: true},
	{Name: "com.android.inputmethod.latin", Label: "Keyboard", Version: "14", System: true},
	{Name: "com.android.adbkeyboard", Label: "ADB Keyboard", Version: "2.0", System: true},
}

// features are what `pm list features` reports: a phone's touchscreen
// hardware, not a TV or a watch.
var features = []string{"android.hardware.touchscreen", "android.hardware.touchscreen.multitouch",
	"android.hardware.faketouch", "android.hardware.screen.portrait", "android.hardware.screen.landscape",
	"android.hardware.wifi", "android.software.input_methods", "android.software.home_screen",
	"android.software.app_widgets", "android.hardware.ram.normal"}

func (s *Server) packages() []Package {
	seen := map[string]bool{}
	var out []Package
	for _, p := range s.phone.Packages() {
		seen[p.Name] = true
		out = append(out, p)
	}
	for _, p := range systemPackages {
		if !seen[p.Name] {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (s *Server) pkg(name string) (Package, bool) {
	for _, p := range s.packages() {
		if p.Name == name || slices.Contains(p.Aliases, name) {
			return p, true
		}
	}
	return Package{}, false
}

func apkDir(pkg string) string { return "/data/app/" + pkg + "-1" }

// activityClass expands ".Act" to "pkg.Act".
func activityClass(p Package) string {
	if strings.HasPrefix(p.LauncherActivity, ".") {
		return p.Name + p.LauncherActivity
	}
	return p.LauncherActivity
}

func cmdPm(ctx context.Context, c *Cmd) int {
	a := c.Args[1:]
	if len(a) == 0 {
		c.printf("usage: pm list packages|features, pm path PACKAGE, pm install PATH, pm install-create|install-write|install-commit, pm resolve-activity, pm query-activities, pm dump PACKAGE\n")
		return 255
	}
	switch a[0] {
	case "list":
		if len(a) >= 2 && a[1] == "features" {
			for _, f := range features {
				c.printf("feature:%s\n", f)
			}
			return 0
		}
		if len(a) >= 2 && a[1] == "packages" {
			return pmListPackages(c, a[2:])
		}
	case "path":
		if len(a) >= 2 {
			if _, ok := c.s.pkg(a[len(a)-1]); ok {
				c.printf("package:%s/base.apk\n", apkDir(a[len(a)-1]))
				return 0
			}
			return 1
		}
	case "dump":
		if len(a) >= 2 {
			return dumpPackage(c, a[1])
		}
	case "resolve-activity":
		return pmResolve(c, a[1:])
	case "query-activities":
		return pmQuery(c, a[1:])
	case "install":
		return pmInstall(c, a[1:])
	case "install-create", "install-write", "install-commit", "install-abandon":
		return pmSession(c, a)
	case "uninstall", "clear", "install-existing":
		return pmPackageOp(c, a)
	case "grant", "revoke":
		if len(a) >= 3 {
			if _, ok := c.s.pkg(a[1]); !ok {
				return c.fail(255, "Exception occurred while executing '%s':\njava.lang.IllegalArgumentException: Unknown package: %s", a[0], a[1])
			}
			return 0 // simulated apps have no runtime permissions to change
		}
	}
	fmt.Fprintf(c.Stderr, "Unknown command: %s\n", strings.Join(a, " "))
	return 255
}

// pmPackageOp is `pm clear|uninstall|install-existing [--user N] [-k] PKG`.
func pmPackageOp(c *Cmd, a []string) int {
	var pkg string
	for i := 1; i < len(a); i++ {
		switch {
		case a[i] == "--user":
			i++
		case !strings.HasPrefix(a[i], "-"):
			pkg = a[i]
		}
	}
	if pkg == "" {
		return c.fail(255, "%s needs a package name", a[0])
	}
	if isSystemPackage(pkg) {
		c.printf("Failure [DELETE_FAILED_INTERNAL_ERROR: %s is part of the system image]\n", pkg)
		return 1
	}
	ph := c.phone()
	switch a[0] {
	case "clear":
		if ph.ResetApp(pkg) != nil {
			c.printf("Failed\n")
			return 1
		}
		c.s.mu.Lock()
		delete(c.s.started, pkg)
		c.s.mu.Unlock()
		c.printf("Success\n")
	case "uninstall":
		if err := ph.Uninstall(pkg); err != nil {
			if errors.Is(err, ErrUnknownPackage) {
				c.printf("Failure [DELETE_FAILED_INTERNAL_ERROR]\n")
			} else {
				c.printf("Failure [DELETE_FAILED_INTERNAL_ERROR: %v]\n", err)
			}
			return 1
		}
		c.s.mu.Lock()
		delete(c.s.started, pkg)
		c.s.mu.Unlock()
		c.printf("Success\n")
	case "install-existing":
		if ph.InstallExisting(pkg) != nil {
			c.printf("Package %s doesn't exist\n", pkg)
			return 1
		}
		c.printf("Package %s installed for user: 0\n", pkg)
	}
	return 0
}

func isSystemPackage(name string) bool {
	for _, p := range systemPackages {
		if p.Name == name {
			return true
		}
	}
	return false
}

func pmListPackages(c *Cmd, a []string) int {
	var withPath, third, system bool
	filter := ""
	for i := 0; i < len(a); i++ {
		switch a[i] {
		case "-f":
			withPath = true
		case "-3":
			third = true
		case "-s":
			system = true
		case "--user":
			i++
		default:
			if !strings.HasPrefix(a[i], "-") {
				filter = a[i]
			}
		}
	}
	for _, p := range c.s.packages() {
		if (third && p.System) || (system && !p.System) || !strings.Contains(p.Name, filter) {
			continue
		}
		if withPath {
			c.printf("package:%s/base.apk=%s\n", apkDir(p.Name), p.Name)
		} else {
			c.printf("package:%s\n", p.Name)
		}
	}
	return 0
}

// launchables are the packages with a launcher activity, optionally one.
func (s *Server) launchables(only string) []Package {
	var out []Package
	for _, p := range s.packages() {
		if p.LauncherActivity != "" && (only == "" || p.Name == only || slices.Contains(p.Aliases, only)) {
			out = append(out, p)
		}
	}
	return out
}

func pmResolve(c *Cmd, a []string) int {
	brief, pkg := false, ""
	for i := 0; i < len(a); i++ {
		switch a[i] {
		case "--brief":
			brief = true
		case "-a", "-c", "-d", "-t", "--user", "-f":
			i++
		default:
			if !strings.HasPrefix(a[i], "-") {
				pkg = a[i]
			}
		}
	}
	list := c.s.launchables(pkg)
	if pkg == "" || len(list) == 0 {
		c.printf("No activity found\n")
		return 0
	}
	p := list[0]
	c.printf("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n")
	if brief {
		c.printf("%s\n", component(p.Name, activityClass(p)))
		return 0
	}
	c.printf("ActivityInfo:\n  name=%s\n  packageName=%s\n  enabled=true exported=true directBootAware=false\n", activityClass(p), p.Name)
	return 0
}

func pmQuery(c *Cmd, a []string) int {
	only := ""
	for i := 0; i < len(a); i++ {
		switch a[i] {
		case "-a", "-c", "-d", "-t", "--user", "-f", "--brief", "--components":
			if a[i] != "--brief" && a[i] != "--components" {
				i++
			}
		default:
			if !strings.HasPrefix(a[i], "-") {
				only = a[i]
			}
		}
	}
	list := c.s.launchables(only)
	if len(list) == 0 {
		c.printf("No activities found\n")
		return 0
	}
	c.printf("%d activities found:\n", len(list))
	for i, p := range list {
		c.printf("  Activity #%d:\n    priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n", i)
		c.printf("    ActivityInfo:\n      name=%s\n      packageName=%s\n      labelRes=0x0 nonLocalizedLabel=%s icon=0x0\n", activityClass(p), p.Name, p.Label)
		c.printf("      enabled=true exported=true directBootAware=false\n")
	}
	return 0
}

// pmInstall is `pm install [OPTIONS] PATH` and the streamed form
// `pm install [OPTIONS] -S SIZE` that `adb install` uses, reading the APK
// from stdin.
func pmInstall(c *Cmd, a []string) int {
	size, file := -1, ""
	for i := 0; i < len(a); i++ {
		switch a[i] {
		case "-S":
			if i+1 < len(a) {
				size, _ = strconv.Atoi(a[i+1])
			}
			i++
		case "-i", "--user", "--install-location", "-p", "--abi", "--originating-uri", "--referrer", "--pkg":
			i++
		default:
			if !strings.HasPrefix(a[i], "-") {
				file = a[i]
			}
		}
	}
	var data []byte
	switch {
	case file != "" && file != "-":
		b, err := c.fs().ReadFile(c.path(file))
		if err != nil {
			c.printf("Failure [INSTALL_FAILED_INVALID_URI: %s: %s]\n", file, failMessage(err))
			return 1
		}
		data = b
	case size >= 0:
		b, err := readN(c.Stdin, size, c.fs().MaxFile())
		if err != nil {
			c.printf("Failure [INSTALL_FAILED_MEDIA_UNAVAILABLE: read %d bytes of APK from stdin: %v]\n", size, err)
			return 1
		}
		data = b
	default:
		c.printf("Error: APK content must be streamed (-S SIZE) or given as a path\n")
		return 255
	}
	return c.install(data)
}

func (c *Cmd) install(data []byte) int {
	p, err := ParseAPK(data)
	if err != nil {
		c.printf("Failure [INSTALL_PARSE_FAILED_NOT_APK: %v]\n", err)
		return 1
	}
	if err := c.phone().Install(p); err != nil {
		c.printf("Failure [INSTALL_FAILED_INTERNAL_ERROR: %v]\n", err)
		return 1
	}
	c.s.log.Info("adbd: installed package", "package", p.Name, "launcher", p.LauncherActivity)
	c.printf("Success\n")
	return 0
}

func readN(r io.Reader, n int, limit int64) ([]byte, error) {
	if n < 0 {
		// No size given: up to the end, within the bound.
		data, err := io.ReadAll(io.LimitReader(r, limit+1))
		if err == nil && int64(len(data)) > limit {
			err = fmt.Errorf("%w: the simulated phone keeps files of at most %d bytes", ErrNoSpace, limit)
		}
		return data, err
	}
	if int64(n) > limit {
		return nil, fmt.Errorf("%w: %d bytes is more than the simulated phone's %d-byte bound on a file", ErrNoSpace, n, limit)
	}
	buf := make([]byte, n)
	_, err := io.ReadFull(r, buf)
	return buf, err
}

// pmSession implements the session install protocol (install-create,
// install-write, install-commit, install-abandon) of `adb install-multiple`.
func pmSession(c *Cmd, a []string) int {
	s := c.s
	switch a[0] {
	case "install-create":
		s.mu.Lock()
		s.nextSession++
		id := s.nextSession
		s.sessions[id] = map[string][]byte{}
		s.mu.Unlock()
		c.printf("Success: created install session [%d]\n", id)
		return 0
	}
	// The rest name the session first (after options).
	var rest []string
	size := -1
	for i := 1; i < len(a); i++ {
		if a[i] == "-S" && i+1 < len(a) {
			size, _ = strconv.Atoi(a[i+1])
			i++
			continue
		}
		rest = append(rest, a[i])
	}
	if len(rest) == 0 {
		c.printf("Error: missing session id\n")
		return 255
	}
	id, err := strconv.Atoi(rest[0])
	s.mu.Lock()
	files, ok := s.sessions[id]
	s.mu.Unlock()
	if err != nil || !ok {
		c.printf("Failure [INSTALL_FAILED_INVALID_SESSION: no session %s]\n", rest[0])
		return 1
	}
	switch a[0] {
	case "install-write":
		if len(rest) < 2 {
			c.printf("Error: install-write needs a split name\n")
			return 255
		}
		var data []byte
		if len(rest) >= 3 && rest[2] != "-" {
			data, err = c.fs().ReadFile(c.path(rest[2]))
		} else {
			data, err = readN(c.Stdin, size, c.fs().MaxFile())
		}
		if err != nil {
			c.printf("Failure [INSTALL_FAILED_MEDIA_UNAVAILABLE: %v]\n", err)
			return 1
		}
		s.mu.Lock()
		held := int64(len(data))
		for sid, sess := range s.sessions {
			for name, b := range sess {
				if sid != id || name != rest[1] { // a split written again replaces itself
					held += int64(len(b))
				}
			}
		}
		if _, total := c.fs().Limits(); held > total {
			s.mu.Unlock()
			c.printf("Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE: install sessions would hold %d bytes; the simulated phone keeps %d in all: abandon one]\n", held, total)
			return 1
		}
		files[rest[1]] = data
		s.mu.Unlock()
		c.printf("Success: streamed %d bytes\n", len(data))
		return 0
	case "install-abandon":
		s.mu.Lock()
		delete(s.sessions, id)
		s.mu.Unlock()
		c.printf("Success\n")
		return 0
	}
	// install-commit installs the first APK of the session that parses
	// (split APKs are not modelled).
	s.mu.Lock()
	delete(s.sessions, id)
	s.mu.Unlock()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := ParseAPK(files[n]); err == nil {
			return c.install(files[n])
		}
	}
	if len(names) == 0 {
		c.printf("Failure [INSTALL_FAILED_INVALID_APK: the session holds no APK]\n")
		return 1
	}
	return c.install(files[names[0]])
}
