package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version and Commit are stamped by `make install`:
// -ldflags "-X github.com/apexagent/apex/cli.Version=… -X github.com/apexagent/apex/cli.Commit=…".
// Unset, they come from the build information Go records (the module's
// version under `go install …@version`, the VCS revision when stamped).
var (
	Version = ""
	Commit  = ""
)

// buildInfo is what `apex version` reports.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"` // built from a checkout with changes not committed
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: Version, Commit: Commit, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && b.Commit == "":
				b.Commit = s.Value
			case s.Key == "vcs.modified" && Commit == "":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	return b
}

// String is the one line `apex version` and `apex --version` print.
func (b buildInfo) String() string {
	commit := "commit unknown: built without version stamps, which make install adds"
	if b.Commit != "" {
		commit = "commit " + b.Commit
		if b.Modified {
			commit += " with uncommitted changes"
		}
	}
	return fmt.Sprintf("apex %s (%s; %s %s/%s)", b.Version, commit, b.Go, b.OS, b.Arch)
}

func newCmdVersion(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the apex version and the commit it was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			b := readBuildInfo()
			if env.JSON {
				return env.PrintJSON(b)
			}
			_, err := fmt.Fprintln(env.Out, b)
			return err
		},
	}
}
