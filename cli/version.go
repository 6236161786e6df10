package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func newCmdVersion(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the apex version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if env.JSON {
				return env.PrintJSON(map[string]string{"version": Version, "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH})
			}
			_, err := fmt.Fprintf(env.Out, "apex %s (%s %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
