//go:build !apexlite

package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/apexagent/apex/farm/api"
	"github.com/apexagent/apex/farm/artifact"
	"github.com/apexagent/apex/farm/auth"
	"github.com/spf13/cobra"
)

func newCmdFarmApp(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "app",
		Short: "Store app artifacts (APK, IPA, app bundle) on the farm for runs to install",
		Long: `Each project keeps its apps in a store of its own, which only its members
(testers upload, viewers list) and the hosts running its runs read; an app is
stored once per project by the SHA-256 of its content, under the names the
project gives it. A run names the ones to install with apex farm run --app
HASH|NAME, resolved in the run's project only; its host fetches each into a
bounded cache on its disk (by hash) and installs it before the run starts
(Android: push + pm install through the adb client).`,
	}
	var ff farmFlags
	var project, name string
	upload := &cobra.Command{
		Use:     "upload FILE",
		Short:   "Upload an APK, IPA or zipped .app bundle (stored once by its content hash)",
		Example: `  apex farm app upload build/shop.apk --project shop && apex farm run --project shop --app shop.apk tests/*.yaml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, closeFarm, err := openArtifacts(cmd.Context(), &ff, "apex farm app upload", auth.Drive, project)
			if err != nil {
				return err
			}
			defer closeFarm()
			info, existed, err := s.Upload(cmd.Context(), args[0], project, name)
			if err != nil {
				return err
			}
			if env.JSON {
				return env.PrintJSON(info)
			}
			how := "stored"
			if existed {
				how = "already stored; named"
			}
			fmt.Fprintf(env.Out, "%s\t%s\t%s %s in project %s (%d bytes)\n", info.Hash, info.Name, how, info.Kind, info.Project, info.Size)
			return nil
		},
	}
	ff.register(upload, "farm")
	upload.Flags().StringVar(&project, "project", "default", "the project whose runs name the app")
	upload.Flags().StringVar(&name, "name", "", "the name runs give it with --app (default: the file's name)")

	var lf farmFlags
	var lproject string
	list := &cobra.Command{
		Use:   "list",
		Short: "List a project's apps",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, closeFarm, err := openArtifacts(cmd.Context(), &lf, "apex farm app list", auth.View, lproject)
			if err != nil {
				return err
			}
			defer closeFarm()
			infos, err := s.List(cmd.Context(), lproject)
			if err != nil {
				return err
			}
			if env.JSON {
				return env.PrintJSON(infos)
			}
			tw := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "HASH\tNAME\tPROJECT\tKIND\tBYTES\tUPLOADED")
			for _, i := range infos {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", i.Hash[:12], i.Name, i.Project, i.Kind, i.Size, i.Uploaded.Format("2006-01-02 15:04"))
			}
			return tw.Flush()
		},
	}
	lf.register(list, "farm")
	list.Flags().StringVar(&lproject, "project", "default", "list the apps this project named")
	cmd.AddCommand(upload, list)
	return cmd
}

// openArtifacts connects to the farm and opens its artifacts, once the
// control plane said the token may do a on project: the farm's NATS
// permissions refuse the rest anyway, but this refusal says what to ask for.
func openArtifacts(ctx context.Context, ff *farmFlags, name string, a auth.Action, project string) (*artifact.Store, func(), error) {
	nc, js, err := ff.connect(name)
	if err != nil {
		return nil, nil, err
	}
	if err := api.NewClient(nc, ff.Token, farmActor()).Allow(ctx, a, project); err != nil {
		nc.Close()
		return nil, nil, err
	}
	return artifact.New(js), nc.Close, nil
}

// resolveApps turns --app references into artifact hashes of project.
func resolveApps(ctx context.Context, c *farmClient, project string, refs []string) ([]string, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	s := artifact.New(c.js)
	var out []string
	for _, ref := range refs {
		info, err := s.Resolve(ctx, project, ref)
		if err != nil {
			return nil, fmt.Errorf("--app %s: %w", ref, err)
		}
		out = append(out, info.Hash)
	}
	return out, nil
}
