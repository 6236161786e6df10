//go:build !apexlite

package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apexagent/apex/internal/yamlerr"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/store"
	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

// DefaultRetention is what recorded runs are kept unless apex.yaml's runs:
// section says otherwise: the newest 200, pruned as each run recorded by
// apex run, act, playground or mcp finishes (openRuns).
var DefaultRetention = store.Retention{Keep: 200}

// RunsPruneOptions are the inputs of `apex runs prune`.
type RunsPruneOptions struct {
	Dir       string
	Keep      int
	OlderThan string // a duration: 36h, 30d, 2w
	DryRun    bool
}

func newCmdRuns(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "Manage the recorded runs (list them with apex report)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newCmdRunsPrune(env))
	return cmd
}

func newCmdRunsPrune(env *Env) *cobra.Command {
	opts := &RunsPruneOptions{}
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Delete old recorded runs: beyond the newest N, or older than a duration",
		Long: `Delete recorded runs — their record, screenshots, scenes and reports — that
are beyond the newest --keep N, or that started more than --older-than ago.
Runs still running are kept. With neither flag, the retention of apex.yaml's
runs: section applies:

  runs:
    keep: 200      # the newest 200 runs (0 keeps every run)
    max_age: 30d   # and none older than 30 days

Without a runs: section, the newest 200 are kept. apex run, act, playground
and mcp prune to that retention each time a run they record finishes.`,
		Example: `  apex runs prune --keep 20
  apex runs prune --older-than 7d --dry-run
  apex --json runs prune --dir ci-runs --keep 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runsPrune(cmd.Context(), env, opts, cmd.Flags().Changed("keep") || cmd.Flags().Changed("older-than"))
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Dir, "dir", "", "directory of recorded runs (default $"+RunsDirEnv+" or "+DefaultRunsDir+")")
	f.IntVar(&opts.Keep, "keep", 0, "keep the newest N runs")
	f.StringVar(&opts.OlderThan, "older-than", "", "delete runs that started longer ago than this (e.g. 36h, 30d, 2w)")
	f.BoolVar(&opts.DryRun, "dry-run", false, "only list the runs that would be deleted")
	return cmd
}

// pruneResult is `apex runs prune --json`'s output.
type pruneResult struct {
	Dir     string      `json:"dir"`
	Deleted []store.Run `json:"deleted"`
	Bytes   int64       `json:"bytes"` // what the deleted runs' files took
	DryRun  bool        `json:"dry_run,omitempty"`
}

func runsPrune(ctx context.Context, env *Env, opts *RunsPruneOptions, flagsGiven bool) error {
	keep := store.Retention{Keep: opts.Keep}
	if opts.Keep < 0 {
		return fmt.Errorf("--keep %d: give 0 or more", opts.Keep)
	}
	if opts.OlderThan != "" {
		d, err := parseAge(opts.OlderThan)
		if err != nil {
			return fmt.Errorf("--older-than %s: %w", opts.OlderThan, err)
		}
		keep.MaxAge = d
	}
	if !flagsGiven {
		var err error
		if keep, err = configuredRetention(); err != nil {
			return err
		}
	}
	dir := opts.Dir
	if dir == "" {
		dir = defaultRunsDir()
	}
	if _, err := os.Stat(filepath.Join(dir, store.DBName)); err != nil {
		return fmt.Errorf("no runs recorded in %s: check --dir (or $%s)", dir, RunsDirEnv)
	}
	st, err := store.OpenWith(dir, &store.Options{Log: env.Log})
	if err != nil {
		return err
	}
	defer st.Close()
	res := pruneResult{Dir: st.Dir(), DryRun: opts.DryRun, Deleted: []store.Run{}}
	doomed, err := st.Prune(ctx, keep, true)
	if err != nil {
		return err
	}
	sizes := map[string]int64{}
	for _, r := range doomed {
		sizes[r.ID] = dirSize(r.Dir)
	}
	deleted := doomed
	if !opts.DryRun {
		deleted, err = st.Prune(ctx, keep, false)
	}
	for _, r := range deleted {
		res.Deleted = append(res.Deleted, r)
		res.Bytes += sizes[r.ID]
	}
	if perr := printPrune(env, res); perr != nil {
		return perr
	}
	return err
}

func printPrune(env *Env, res pruneResult) error {
	if env.JSON {
		return env.PrintJSON(res)
	}
	verb := "deleted"
	if res.DryRun {
		verb = "would delete"
	}
	if len(res.Deleted) == 0 {
		_, err := fmt.Fprintf(env.Out, "nothing to prune in %s\n", res.Dir)
		return err
	}
	for _, r := range res.Deleted {
		fmt.Fprintf(env.Out, "%s %s\t%s\t%s\n", verb, r.ID, r.Started.Local().Format("2006-01-02 15:04"), dash(r.Name))
	}
	_, err := fmt.Fprintf(env.Out, "%s %d runs (%.1f MB) from %s\n", verb, len(res.Deleted), float64(res.Bytes)/1e6, res.Dir)
	return err
}

// openRuns opens a runs directory that a face records into, with the
// configured retention: each finished run prunes the runs it does not keep.
// A bad runs: section is a warning, and then the default applies.
func openRuns(env *Env, dir string) (*store.Store, error) {
	keep, err := configuredRetention()
	if err != nil {
		fmt.Fprintf(env.Progress(), "apex: warning: %v; keeping the newest %d runs\n", err, DefaultRetention.Keep)
		keep = DefaultRetention
	}
	return store.OpenWith(dir, &store.Options{Log: env.Log, Retention: keep})
}

// configuredRetention is the runs: section of the apex.yaml discovery
// finds, or DefaultRetention.
func configuredRetention() (store.Retention, error) {
	file, _ := configFile("", os.Getenv)
	if file == "" {
		return DefaultRetention, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return store.Retention{}, fmt.Errorf("read %s: %w", file, err)
	}
	var doc struct {
		Runs yaml.Node `yaml:"runs"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamlerr.Locate(data, err)
		return store.Retention{}, &llm.ConfigError{File: file, Line: line, Msg: "invalid YAML: " + msg}
	}
	n := &doc.Runs
	if n.Kind == 0 {
		return DefaultRetention, nil
	}
	if n.Kind != yaml.MappingNode {
		return store.Retention{}, &llm.ConfigError{File: file, Line: n.Line, Key: "runs", Msg: "expected keep: and max_age:"}
	}
	keep := DefaultRetention
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "keep":
			c, err := strconv.Atoi(v.Value)
			if err != nil || c < 0 {
				return keep, &llm.ConfigError{File: file, Line: v.Line, Key: "runs.keep", Msg: fmt.Sprintf("%q is not a number of runs (0 keeps every run)", v.Value)}
			}
			keep.Keep = c
		case "max_age":
			d, err := parseAge(v.Value)
			if err != nil {
				return keep, &llm.ConfigError{File: file, Line: v.Line, Key: "runs.max_age", Msg: err.Error()}
			}
			keep.MaxAge = d
		default:
			return keep, &llm.ConfigError{File: file, Line: k.Line, Key: "runs", Msg: fmt.Sprintf("unknown setting %q; known settings: keep, max_age", k.Value)}
		}
	}
	return keep, nil
}

// parseAge reads a duration as Go writes it (36h, 90m) or in days and
// weeks (30d, 2w).
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			if v, err := strconv.ParseFloat(n, 64); err == nil && v >= 0 {
				return time.Duration(v * float64(unit)), nil
			}
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration: write e.g. 36h, 30d or 2w", s)
	}
	return d, nil
}

// dirSize is the bytes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
