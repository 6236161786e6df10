//go:build !apexlite

package cli

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/store"
	"github.com/spf13/cobra"
)

// Shell completion (apex completion bash|zsh|fish|powershell) of what a
// command line names: device IDs, run IDs, action names and app packages.

// completeRunIDs completes a run ID of --dir's store, newest first, and
// "latest".
func completeRunIDs(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	dir, _ := cmd.Flags().GetString("dir")
	if dir == "" {
		dir = defaultRunsDir()
	}
	ids := []cobra.Completion{cobra.CompletionWithDesc("latest", "the newest run")}
	if _, err := os.Stat(filepath.Join(dir, store.DBName)); err == nil {
		if st, err := store.Open(dir); err == nil {
			defer st.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), completeTimeout)
			defer cancel()
			runs, _ := st.Runs(ctx, 200)
			for _, r := range runs {
				ids = append(ids, cobra.CompletionWithDesc(r.ID, r.Status+" "+cmp.Or(r.Name, r.Script)))
			}
		}
	}
	return filterPrefix(ids, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeActions completes an action name of either platform's space.
func completeActions(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []cobra.Completion
	for _, p := range doPlatforms {
		for _, a := range action.ForPlatform(p).Actions() {
			if !slices.ContainsFunc(names, func(c cobra.Completion) bool { return strings.HasPrefix(c, a.Name()+"\t") }) {
				names = append(names, cobra.CompletionWithDesc(a.Name(), firstSentence(a.Description())))
			}
		}
	}
	return filterPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeApps completes --launch with the packages of the simulated
// phone's apps (the built-ins and those of --app specs).
func completeApps(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	specs, _ := cmd.Flags().GetStringArray("app")
	var pkgs []cobra.Completion
	for _, p := range simApps(specs) {
		pkgs = append(pkgs, p)
	}
	return filterPrefix(pkgs, toComplete), cobra.ShellCompDirectiveNoFileComp
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i]
	}
	return strings.TrimSuffix(s, ".")
}
