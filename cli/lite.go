//go:build apexlite

package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/apexagent/apex/device"
	"github.com/spf13/cobra"
)

// The light build of apex (go build -tags apexlite, which make install
// installs as apex) links only the one-shot commands NewRoot adds itself
// (version, devices, source, screenshot, scene) and their device hosts:
// none of the runner, store, agents, MCP, playground or farm, whose
// libraries' package initialisation (NATS server, SQLite, JSON Schema, …)
// every process of the full build pays before main. Every other command
// line — another command, help, completion, --sim, --farm — it hands, as
// it is, to the full build installed beside it as FullBinary.

// FullBinary is the name of the full build beside the light one.
const FullBinary = "apex-full"

// addFaces adds no face; the shell completion scripts (cobra's default
// completion command, which it would build on every run) are the full
// build's too.
func addFaces(root *cobra.Command, _ *Env) { root.CompletionOptions.DisableDefaultCmd = true }

// handsOff reports whether args name no command of this build (or only
// root but for --version: its help lists every command, which only the
// full build has), or
// ask the shell's completions, which only the full build gives whole
// (every command, and iPhones among the devices).
func handsOff(root *cobra.Command, args []string) bool {
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		return true
	}
	cmd, _, err := root.Find(args)
	return err != nil || cmd == root && !slices.Equal(args, []string{"--version"})
}

// handOff replaces this process with the full build running args.
func handOff(args []string) int {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	full := filepath.Join(filepath.Dir(self), FullBinary)
	if err == nil {
		err = execFull(full, args)
	}
	fmt.Fprintf(os.Stderr, "apex: this is the light apex (make install), which hands this command to %s: %v\n"+
		"Run make install again to install both, or install one binary with every command: go install ./cmd/apex\n", full, err)
	return 1
}

// openSim and openFarmDevice hand --sim and --farm to the full build,
// which links the simulated phone and the farm.
func openSim(context.Context, *Env, *DeviceFlags) (device.Driver, device.Target, func(), error) {
	return nil, device.Target{}, nil, errHandOff
}

func openFarmDevice(context.Context, *Env, *DeviceFlags) (device.Driver, device.Target, func(), error) {
	return nil, device.Target{}, nil, errHandOff
}

// wdaHost hands the command to the full build when WebDriverAgent URLs
// are given (this build links no iOS driver: net/http and crypto/tls
// were the largest part of its start); without any, there is no iPhone
// to list.
func wdaHost(*Env) (device.Host, error) {
	urls, err := configuredWDAURLs()
	if err != nil {
		return nil, err
	}
	if len(urls) > 0 || os.Getenv(wdaURLsEnv) != "" {
		return nil, errHandOff
	}
	return nil, nil
}

// wdaDevice hands --device wda:URL to the full build.
func wdaDevice(context.Context, *Env, string) (device.Target, func() (device.Driver, error), error) {
	return device.Target{}, nil, errHandOff
}

// wdaURLsFromConfig hands the command to the full build when apex.yaml may
// have a wda: section (it mentions wda at all): this build links no YAML
// parser, whose package initialisation was the largest of its start.
func wdaURLsFromConfig(file string) ([]string, error) {
	data, err := readConfig(file)
	if data == nil || err != nil {
		return nil, err
	}
	if bytes.Contains(data, []byte("wda")) {
		return nil, errHandOff
	}
	return nil, nil
}
