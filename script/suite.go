package script

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// SuiteFile is the name of the file that makes a folder a suite.
const SuiteFile = "apex.suite.yaml"

// Suite is a set of scripts run together: a suite file, or a folder.
//
//	name: shop
//	scripts: [login.yaml, "*.yaml"]   # order; globs, relative to the file
//	include: [smoke]                  # run scripts with one of these tags
//	exclude: [slow]                   # … and none of these
//	defaults:
//	  device: sim                     # when the command line names none: an ID, sim or sim:ios
//	  retries: 1                      # when --retry is not given
//	  timeout: 5s                     # how long a step waits for its target
type Suite struct {
	File             string
	Name             string
	Scripts          []string // the script files, in order
	Include, Exclude []string
	Defaults         SuiteDefaults
}

// SuiteDefaults apply to a suite's scripts where the command line and the
// script say nothing.
type SuiteDefaults struct {
	Device  string
	Retries int
	Timeout time.Duration
}

// IsSuite reports whether path names a suite: a folder, or a file named
// *.suite.yaml.
func IsSuite(path string) bool {
	if strings.HasSuffix(path, ".suite.yaml") || strings.HasSuffix(path, ".suite.yml") {
		return true
	}
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// LoadSuite reads a suite file, or a folder: its apex.suite.yaml when it
// has one, else every *.yaml in it (not below: keep flows in a subfolder)
// in name order.
func LoadSuite(path string) (*Suite, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		file := filepath.Join(path, SuiteFile)
		if _, err := os.Stat(file); err != nil {
			s := &Suite{File: path, Name: filepath.Base(path)}
			s.Scripts, err = scriptsIn(path, []string{"*.yaml", "*.yml"})
			if err == nil && len(s.Scripts) == 0 {
				err = fmt.Errorf("suite %s: no *.yaml scripts in the folder", path)
			}
			return s, err
		}
		path = file
	}
	data, err := readRegular(path, maxFlowFile)
	if err != nil {
		return nil, fmt.Errorf("suite: %w", err)
	}
	l := &loader{file: path, opts: &Options{LookupEnv: func(string) (string, bool) { return "", false }}, vars: newNames(nil)}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, l.syntaxError(data, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &Error{Pos: Pos{File: path}, Msg: "empty suite: expected scripts:, include:, exclude: or defaults:"}
	}
	s := &Suite{File: path, Name: strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".suite")}
	patterns := []string{"*.yaml", "*.yml"}
	for _, p := range l.pairs(doc.Content[0], "suite") {
		switch p.key.Value {
		case "name":
			s.Name = l.str(p.val, "name")
		case "scripts":
			patterns = l.words(p.val, "scripts")
		case "include":
			s.Include = l.words(p.val, "include")
		case "exclude":
			s.Exclude = l.words(p.val, "exclude")
		case "defaults":
			for _, d := range l.pairs(p.val, "defaults") {
				switch d.key.Value {
				case "device":
					s.Defaults.Device = l.str(d.val, "defaults.device")
				case "retries":
					s.Defaults.Retries = l.integer(d.val, "defaults.retries")
					if s.Defaults.Retries < 0 || s.Defaults.Retries > 10 {
						l.errorf(d.val, "defaults.retries: expected 0 to 10, got %d", s.Defaults.Retries)
					}
				case "timeout":
					s.Defaults.Timeout = l.millis(d.val, "defaults.timeout")
				default:
					l.errorf(d.key, "unknown key %q in defaults: expected device, retries or timeout", d.key.Value)
				}
			}
		default:
			l.errorf(p.key, "unknown key %q in a suite: expected name, scripts, include, exclude or defaults", p.key.Value)
		}
	}
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	s.Scripts, err = scriptsIn(filepath.Dir(path), patterns)
	if err == nil && len(s.Scripts) == 0 {
		err = fmt.Errorf("suite %s: scripts: %s matches no file", path, strings.Join(patterns, ", "))
	}
	return s, err
}

// scriptsIn lists the files patterns match in dir, in the order of the
// patterns (each pattern's matches in name order, each file once), suite
// files left out.
func scriptsIn(dir string, patterns []string) ([]string, error) {
	var out []string
	for _, p := range patterns {
		if filepath.IsAbs(p) || strings.HasPrefix(filepath.Clean(p), "..") {
			return nil, fmt.Errorf("suite: scripts: %q: name files inside the suite's folder", p)
		}
		m, err := filepath.Glob(filepath.Join(dir, p))
		if err != nil {
			return nil, fmt.Errorf("suite: scripts: %q: %w", p, err)
		}
		slices.Sort(m)
		for _, f := range m {
			base := filepath.Base(f)
			if base == SuiteFile || IsSuite(f) || slices.Contains(out, f) {
				continue
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// Selects reports whether a script with tags runs in the suite: it has one
// of Include's tags (or Include is empty) and none of Exclude's.
func (s *Suite) Selects(tags []string) bool { return SelectTags(tags, s.Include, s.Exclude) }

// SelectTags reports whether tags hold one of include (or include is
// empty) and none of exclude.
func SelectTags(tags, include, exclude []string) bool {
	for _, t := range exclude {
		if slices.Contains(tags, t) {
			return false
		}
	}
	if len(include) == 0 {
		return true
	}
	for _, t := range include {
		if slices.Contains(tags, t) {
			return true
		}
	}
	return false
}

// ParseTags reads --tags: comma-separated tags a script must have one of;
// a tag written !tag excludes the scripts that have it.
func ParseTags(s string) (include, exclude []string, err error) {
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		neg := strings.HasPrefix(t, "!")
		t = strings.TrimPrefix(t, "!")
		if t == "" || strings.ContainsAny(t, " !") {
			return nil, nil, fmt.Errorf("--tags %q: expected tags separated by commas (smoke,checkout), !tag to leave out", s)
		}
		if neg {
			exclude = append(exclude, t)
		} else {
			include = append(include, t)
		}
	}
	return include, exclude, nil
}
