//go:build !apexlite

package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/apexagent/apex/farm/auth"
	"github.com/spf13/cobra"
)

// farmAdmin dials the farm and opens its auth bucket; only an admin's
// token (or the farm's --token) may.
func (f *farmFlags) admin(ctx context.Context, name string) (*farmClient, *auth.Store, error) {
	c, err := f.dial(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	st, err := auth.Open(ctx, c.js)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, st, nil
}

// adminCmd is a farm admin command: it dials with ff and calls do.
func adminCmd(use, short string, args cobra.PositionalArgs, ff *farmFlags, do func(ctx context.Context, st *auth.Store, args []string) error) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: args,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, st, err := ff.admin(cmd.Context(), "apex farm "+strings.Fields(use)[0])
			if err != nil {
				return err
			}
			defer c.Close()
			return do(cmd.Context(), st, args)
		}}
	ff.register(cmd, "farm")
	return cmd
}

func newCmdFarmUser(env *Env) *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage the farm's users (admin)"}
	var add, ls farmFlags
	cmd.AddCommand(
		adminCmd("add NAME…", "Add users; give each a token with apex farm token create", cobra.MinimumNArgs(1), &add,
			func(ctx context.Context, st *auth.Store, args []string) error {
				for _, n := range args {
					if err := st.AddUser(ctx, n, farmActor()); err != nil {
						return err
					}
					fmt.Fprintf(env.Out, "user %s added\n", n)
				}
				return nil
			}),
		adminCmd("list", "List the users", cobra.NoArgs, &ls,
			func(ctx context.Context, st *auth.Store, _ []string) error {
				users, err := st.Users(ctx)
				if err != nil {
					return err
				}
				if env.JSON {
					return env.PrintJSON(users)
				}
				for _, u := range users {
					fmt.Fprintln(env.Out, u.Name)
				}
				return nil
			}))
	return cmd
}

func newCmdFarmProject(env *Env) *cobra.Command {
	cmd := &cobra.Command{Use: "project", Short: "Manage the farm's projects and their members (admin)"}
	var add, ls, madd farmFlags
	member := &cobra.Command{Use: "member", Short: "Manage a project's members"}
	member.AddCommand(adminCmd("add PROJECT USER…", "Make users members of a project", cobra.MinimumNArgs(2), &madd,
		func(ctx context.Context, st *auth.Store, args []string) error {
			for _, u := range args[1:] {
				if err := st.AddMember(ctx, args[0], u, farmActor()); err != nil {
					return err
				}
				fmt.Fprintf(env.Out, "%s is a member of %s\n", u, args[0])
			}
			return nil
		}))
	cmd.AddCommand(member,
		adminCmd("add NAME…", "Add projects", cobra.MinimumNArgs(1), &add,
			func(ctx context.Context, st *auth.Store, args []string) error {
				for _, n := range args {
					if err := st.AddProject(ctx, n, farmActor()); err != nil {
						return err
					}
					fmt.Fprintf(env.Out, "project %s added\n", n)
				}
				return nil
			}),
		adminCmd("list", "List the projects and their members", cobra.NoArgs, &ls,
			func(ctx context.Context, st *auth.Store, _ []string) error {
				ps, err := st.Projects(ctx)
				if err != nil {
					return err
				}
				if env.JSON {
					return env.PrintJSON(ps)
				}
				tw := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "PROJECT\tMEMBERS")
				for _, p := range ps {
					fmt.Fprintf(tw, "%s\t%s\n", p.Name, strings.Join(p.Members, ","))
				}
				return tw.Flush()
			}))
	return cmd
}

// newCmdFarmTokenCreate is `apex farm token create`: a user's API token.
func newCmdFarmTokenCreate(env *Env) *cobra.Command {
	var ff farmFlags
	var user, role string
	cmd := adminCmd("create", "Make an API token for a user with a role (viewer, tester or admin)", cobra.NoArgs, &ff,
		func(ctx context.Context, st *auth.Store, _ []string) error {
			r, err := auth.ParseRole(role)
			if err != nil {
				return err
			}
			t, err := st.CreateToken(ctx, user, r, farmActor())
			if err != nil {
				return err
			}
			return printToken(env, t, fmt.Sprintf("%s's %s token (shown once; the farm keeps only its hash)", user, r))
		})
	cmd.Flags().StringVar(&user, "user", "", "the user the token speaks for (apex farm user add)")
	cmd.Flags().StringVar(&role, "role", "tester", "viewer, tester or admin")
	cmd.MarkFlagRequired("user")
	return cmd
}

// newCmdFarmTokenRevoke is `apex farm token revoke`.
func newCmdFarmTokenRevoke(env *Env) *cobra.Command {
	var ff farmFlags
	var users []string
	cmd := adminCmd("revoke [TOKEN…]", "Revoke tokens (users' or join tokens), or every token of --user: they stop working at once", cobra.ArbitraryArgs, &ff,
		func(ctx context.Context, st *auth.Store, args []string) error {
			if len(args) == 0 && len(users) == 0 {
				return errors.New("name the tokens to revoke, or give --user NAME to revoke all of a user's")
			}
			n, err := st.Revoke(ctx, args, users, farmActor())
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Out, "revoked %d token(s): their connections are closed and their requests refused\n", n)
			return nil
		})
	cmd.Long = `Revoke tokens: each stops working at once on every face. The control plane
closes the NATS connections made with it (and refuses them when they come
back), the farm API refuses its requests, and the console ends its sessions,
tickets and open streams. Each revocation is in the audit log.`
	cmd.Example = `  apex farm token revoke apexu_0123…
  apex farm token revoke --user alice`
	cmd.Flags().StringArrayVar(&users, "user", nil, "revoke every token of this user (repeatable)")
	return cmd
}

func newCmdFarmJoinToken(env *Env) *cobra.Command {
	var ff farmFlags
	var projects []string
	cmd := adminCmd("join-token", "Make a token hosts join the farm with (apex farm host --token)", cobra.NoArgs, &ff,
		func(ctx context.Context, st *auth.Store, _ []string) error {
			t, err := st.CreateJoinToken(ctx, farmActor(), projects...)
			if err != nil {
				return err
			}
			return printToken(env, t, "join token for hosts (shown once; the farm keeps only its hash)")
		})
	cmd.Flags().StringArrayVar(&projects, "project", nil, "its hosts take only this project's runs and write only its records (repeatable; none: every project)")
	return cmd
}

func printToken(env *Env, token, what string) error {
	if env.JSON {
		return env.PrintJSON(map[string]string{"token": token})
	}
	fmt.Fprintf(env.Err, "%s:\n", what)
	fmt.Fprintln(env.Out, token)
	return nil
}
