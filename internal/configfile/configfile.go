// Package configfile finds apex.yaml, the file Apex reads its settings
// from. It links no YAML parser, so the light build (cmd/apex -tags
// apexlite) can look for the file without one.
package configfile

import (
	"os"
	"path/filepath"
)

// Name is the file Apex reads its settings from.
const Name = "apex.yaml"

// Find finds apex.yaml the way git finds its repository: in dir or the
// nearest of its parents that has one, else in $XDG_CONFIG_HOME/apex/ (by
// default ~/.config/apex/). It returns "" when there is none. getenv reads
// XDG_CONFIG_HOME and HOME; nil means os.Getenv.
func Find(dir string, getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if abs, err := filepath.Abs(dir); err == nil {
		for d := abs; ; d = filepath.Dir(d) {
			if p := filepath.Join(d, Name); isFile(p) {
				return p
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	base := getenv("XDG_CONFIG_HOME")
	if base == "" {
		if home := getenv("HOME"); home != "" {
			base = filepath.Join(home, ".config")
		}
	}
	if base != "" {
		if p := filepath.Join(base, "apex", Name); isFile(p) {
			return p
		}
	}
	return ""
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
