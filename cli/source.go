package cli

import (
	"fmt"

	"github.com/apexagent/apex/scene"
	"github.com/spf13/cobra"
)

// SourceOptions are the inputs of `apex source`.
type SourceOptions struct {
	Device DeviceFlags
	Scene  bool
	Budget int
}

func newCmdSource(env *Env) *cobra.Command {
	opts := &SourceOptions{}
	cmd := &cobra.Command{
		Use:   "source",
		Short: "Print the device's UI hierarchy (raw, or pruned with --scene)",
		Long: `Print the current screen's UI source as the device gives it (uiautomator
XML on Android), or with --scene the pruned Scene a model reads.`,
		Example: `  apex source > window_dump.xml
  apex source --sim --scene
  apex --json source --scene`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Budget <= 0 {
				return fmt.Errorf("--budget %d: give the most bytes of scene text, e.g. %d", opts.Budget, scene.DefaultBudget)
			}
			d, _, release, err := openDevice(cmd.Context(), env, &opts.Device)
			if err != nil {
				return err
			}
			defer release()
			src, err := d.Source(cmd.Context())
			if err != nil {
				return err
			}
			if !opts.Scene {
				if env.JSON {
					return env.PrintJSON(map[string]string{"format": string(src.Format), "source": string(src.Data)})
				}
				_, err = env.Out.Write(src.Data)
				if err == nil && len(src.Data) > 0 && src.Data[len(src.Data)-1] != '\n' {
					_, err = fmt.Fprintln(env.Out)
				}
				return err
			}
			s, err := scene.FromSource(src.Data, &scene.Options{Budget: opts.Budget})
			if err != nil {
				return fmt.Errorf("pruning the source: %w", err)
			}
			if env.JSON {
				return env.PrintJSON(s)
			}
			_, err = fmt.Fprint(env.Out, s.Text())
			return err
		},
	}
	opts.Device.Register(cmd)
	cmd.Flags().BoolVar(&opts.Scene, "scene", false, "print the pruned Scene instead of the raw source")
	cmd.Flags().IntVar(&opts.Budget, "budget", scene.DefaultBudget, "with --scene: most bytes of scene text")
	return cmd
}
