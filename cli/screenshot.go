package cli

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// ScreenshotOptions are the inputs of `apex screenshot`.
type ScreenshotOptions struct {
	Device DeviceFlags
	Output string
}

func newCmdScreenshot(env *Env) *cobra.Command {
	opts := &ScreenshotOptions{}
	cmd := &cobra.Command{
		Use:   "screenshot -o FILE",
		Short: "Save the device's screen as PNG",
		Long: `Save the device's current screen as a PNG file, or with -o - write it to
standard output. The device is the only one attached, or the one --device
names (see apex devices); --sim uses a simulated phone started for this
command alone.`,
		Example: `  apex screenshot -o screen.png
  apex screenshot --sim -o sim.png
  apex screenshot --device emulator-5554 -o - > screen.png`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Output == "" {
				return fmt.Errorf("-o FILE is required (use -o - for standard output)")
			}
			// A bad path fails before the device is touched.
			if dir := filepath.Dir(opts.Output); opts.Output != "-" {
				if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
					return fmt.Errorf("saving the screenshot: no directory %s for %s", dir, opts.Output)
				}
			}
			d, t, release, err := openDevice(cmd.Context(), env, &opts.Device)
			if err != nil {
				return err
			}
			defer release()
			shot, err := d.Screenshot(cmd.Context())
			if err != nil {
				return err
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(shot))
			if err != nil {
				return fmt.Errorf("the device sent a screenshot that is not a PNG: %w", err)
			}
			if opts.Output == "-" {
				_, err = env.Out.Write(shot)
				return err
			}
			if err := os.WriteFile(opts.Output, shot, 0o644); err != nil {
				return fmt.Errorf("saving the screenshot: %w", err)
			}
			if env.JSON {
				return env.PrintJSON(map[string]any{"device": t.ID, "file": opts.Output, "width": cfg.Width, "height": cfg.Height, "bytes": len(shot)})
			}
			_, err = fmt.Fprintf(env.Out, "wrote %s (%dx%d, %d bytes) from %s\n", opts.Output, cfg.Width, cfg.Height, len(shot), t.ID)
			return err
		},
	}
	opts.Device.Register(cmd)
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "PNG file to write (- for standard output)")
	return cmd
}
