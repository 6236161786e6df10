package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/apexagent/apex/internal/configfile"
)

// configUsage is the help of every command's --config.
const configUsage = "the apex.yaml to read (default: the nearest apex.yaml in this directory or a parent, else $XDG_CONFIG_HOME/apex/apex.yaml; none means no model: the rule planner)"

// configFile is the apex.yaml a command reads: the --config file, which
// must exist, or else the one found as git finds its repository
// (configfile.Find); "" when there is none.
func configFile(flag string, getenv func(string) string) (string, error) {
	if flag == "" {
		return configfile.Find(".", getenv), nil
	}
	if _, err := os.Stat(flag); err != nil {
		return "", fmt.Errorf("--config %s: %w (leave --config out to use the nearest apex.yaml)", flag, err)
	}
	return flag, nil
}

// readConfig reads apex.yaml; a missing file is none (nil, nil).
func readConfig(file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return data, nil
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
