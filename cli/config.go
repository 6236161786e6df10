package cli

import (
	"fmt"
	"os"

	"github.com/apexagent/apex/llm"
)

// configUsage is the help of every command's --config.
const configUsage = "the apex.yaml to read (default: the nearest apex.yaml in this directory or a parent, else $XDG_CONFIG_HOME/apex/apex.yaml; none means no model: the rule planner)"

// configFile is the apex.yaml a command reads: the --config file, which
// must exist, or else the one found as git finds its repository
// (llm.FindConfigFile); "" when there is none.
func configFile(flag string, getenv func(string) string) (string, error) {
	if flag == "" {
		return llm.FindConfigFile(".", getenv), nil
	}
	if _, err := os.Stat(flag); err != nil {
		return "", fmt.Errorf("--config %s: %w (leave --config out to use the nearest apex.yaml)", flag, err)
	}
	return flag, nil
}

// loadModelConfig reads the model: section of the apex.yaml the --config
// flag names or discovery finds, and the environment (getenv; nil means
// os.Getenv).
func loadModelConfig(env *Env, flag string, getenv func(string) string) (*llm.Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	file, err := configFile(flag, getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := llm.LoadConfig(file, getenv)
	if err != nil {
		return nil, err
	}
	cfg.Log = env.Log
	return cfg, nil
}
