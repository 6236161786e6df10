package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/apexagent/apex/scene"
	"github.com/spf13/cobra"
)

// SceneOptions are the inputs of `apex scene`.
type SceneOptions struct {
	Files  []string
	Budget int
}

// sceneResult is one file's outcome in --json output.
type sceneResult struct {
	File        string       `json:"file"`
	Format      string       `json:"format,omitempty"`
	Fingerprint string       `json:"fingerprint,omitempty"`
	Scene       *scene.Scene `json:"scene,omitempty"`
	Text        string       `json:"text,omitempty"`
	Error       string       `json:"error,omitempty"`
}

func newCmdScene(env *Env) *cobra.Command {
	opts := &SceneOptions{}
	cmd := &cobra.Command{
		Use:   "scene FILE...",
		Short: "Print the pruned Scene of UI dumps (uiautomator, Appium, XCUITest)",
		Long: `Parse UI sources saved from a device — an Android uiautomator dump
(adb shell uiautomator dump), an Appium page source, or an iOS XCUITest /
WebDriverAgent source — and print the compact Scene a model reads: one line
per visible element with its id, type, text, resource id and centre point,
within a byte budget. Stats follow: nodes in, elements out, bytes in, bytes out.`,
		Example: `  apex scene examples/shop-results.xml
  apex scene --budget 2000 window_dump.xml
  apex --json scene a.xml b.xml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			return sceneRun(env, opts)
		},
	}
	cmd.Flags().IntVar(&opts.Budget, "budget", scene.DefaultBudget, "most bytes of scene text per screen")
	return cmd
}

func sceneRun(env *Env, opts *SceneOptions) error {
	if opts.Budget <= 0 {
		return fmt.Errorf("--budget %d: give a positive number of bytes (default %d)", opts.Budget, scene.DefaultBudget)
	}
	var results []sceneResult
	failed := 0
	for i, file := range opts.Files {
		r := sceneResult{File: file}
		s, err := loadScene(file, opts.Budget)
		if err != nil {
			failed++
			r.Error = err.Error()
			env.Log.Debug("scene failed", "file", file, "err", err)
		} else {
			r.Format, r.Scene, r.Fingerprint = s.Format, s, s.Fingerprint()
		}
		if env.JSON {
			results = append(results, r)
			continue
		}
		if err != nil {
			fmt.Fprintf(env.Err, "apex scene: %v\n", err)
			continue
		}
		if i > 0 {
			fmt.Fprintln(env.Out)
		}
		if len(opts.Files) > 1 {
			fmt.Fprintf(env.Out, "== %s\n", file)
		}
		fmt.Fprint(env.Out, s.Text())
		st := s.Stats
		fmt.Fprintf(env.Out, "-- %d nodes in, %d elements out; %d bytes in, %d bytes out (%s); fingerprint %s\n",
			st.NodesIn, st.ElementsOut, st.BytesIn, st.BytesOut, ratio(st.BytesOut, st.BytesIn), s.Fingerprint()[:12])
	}
	if env.JSON {
		if err := env.PrintJSON(results); err != nil {
			return err
		}
	}
	if failed > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d files could not be read as a UI source", failed, len(opts.Files))}
	}
	return nil
}

func loadScene(file string, budget int) (*scene.Scene, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file; give the path of a saved UI dump (adb shell uiautomator dump, Appium page source)", file)
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	s, err := scene.FromSource(data, &scene.Options{Budget: budget})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

func ratio(out, in int) string {
	if in == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", float64(out)*100/float64(in))
}
