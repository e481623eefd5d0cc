package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/dashboard"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

// userCommand manages the dashboard's accounts. Passwords come from
// standard input only (--password-stdin), never from an argument that other
// users of the machine could read in the process list.
func userCommand(open func(context.Context) (*app.App, error), stdout io.Writer) *cli.Command {
	withApp := func(fn func(ctx context.Context, a *app.App, c *cli.Command) error) cli.ActionFunc {
		return withStore(open, fn)
	}
	emailFlag := &cli.StringFlag{Name: "email", Usage: "the account's e-mail address (its sign-in name)", Required: true}
	stdinFlag := &cli.BoolFlag{Name: "password-stdin", Usage: "read the password from standard input (required)"}
	return &cli.Command{
		Name:  "user",
		Usage: "manage the dashboard's accounts (sign-in at /dashboard/)",
		Commands: []*cli.Command{
			{
				Name: "create", Usage: "create an account: herald user create --email EMAIL --password-stdin < password-file",
				Flags: []cli.Flag{emailFlag, stdinFlag},
				Action: withApp(func(ctx context.Context, a *app.App, c *cli.Command) error {
					email, err := dashboard.CheckEmail(c.String("email"))
					if err != nil {
						return err
					}
					hash, err := passwordFromStdin(c)
					if err != nil {
						return err
					}
					env, err := a.Store.EnvironmentGetByName(ctx, "development")
					if err != nil {
						return fmt.Errorf("the organization: %w", err)
					}
					now := time.Now().UTC()
					u := store.User{ID: id.New(), OrganizationID: env.OrganizationID, Email: email, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
					if err := a.Store.UserCreate(ctx, &u); err != nil {
						if errors.Is(err, store.ErrConflict) {
							return fmt.Errorf("an account with the e-mail address %s exists already (herald user set-password changes its password)", email)
						}
						return err
					}
					fmt.Fprintln(stdout, "created the account", u.Email)
					return nil
				}),
			},
			{
				Name: "list", Usage: "list the accounts",
				Action: withApp(func(ctx context.Context, a *app.App, _ *cli.Command) error {
					users, err := a.Store.UserList(ctx)
					if err != nil {
						return err
					}
					tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "EMAIL\tCREATED\tPASSWORD CHANGED")
					for _, u := range users {
						fmt.Fprintf(tw, "%s\t%s\t%s\n", u.Email, u.CreatedAt.Format(time.RFC3339), u.UpdatedAt.Format(time.RFC3339))
					}
					return tw.Flush()
				}),
			},
			{
				Name: "delete", Usage: "delete an account and end its sessions", Flags: []cli.Flag{emailFlag},
				Action: withApp(func(ctx context.Context, a *app.App, c *cli.Command) error {
					if err := a.Store.UserDelete(ctx, c.String("email")); err != nil {
						return fmt.Errorf("account %s: %w", c.String("email"), err)
					}
					fmt.Fprintln(stdout, "deleted the account", strings.ToLower(strings.TrimSpace(c.String("email"))))
					return nil
				}),
			},
			{
				Name: "set-password", Usage: "change an account's password (from standard input) and end its sessions",
				Flags: []cli.Flag{emailFlag, stdinFlag},
				Action: withApp(func(ctx context.Context, a *app.App, c *cli.Command) error {
					hash, err := passwordFromStdin(c)
					if err != nil {
						return err
					}
					if err := a.Store.UserSetPassword(ctx, &store.UserSetPasswordParams{Email: c.String("email"), PasswordHash: hash,
						Now: time.Now().UTC()}); err != nil {
						return fmt.Errorf("account %s: %w", c.String("email"), err)
					}
					fmt.Fprintln(stdout, "changed the password of", strings.ToLower(strings.TrimSpace(c.String("email"))))
					return nil
				}),
			},
		},
	}
}

// passwordFromStdin reads the password (one line; its line ending is not
// part of it) and returns its hash.
func passwordFromStdin(c *cli.Command) (string, error) {
	if !c.Bool("password-stdin") {
		return "", errors.New("give the password on standard input with --password-stdin (never as an argument)")
	}
	in := c.Root().Reader
	if in == nil {
		in = os.Stdin
	}
	b, err := io.ReadAll(io.LimitReader(in, secret.MaxPasswordLength+3))
	if err != nil {
		return "", fmt.Errorf("reading the password: %w", err)
	}
	pw := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if strings.ContainsAny(pw, "\n\x00") {
		return "", errors.New("the password is one line without NUL characters")
	}
	if len(pw) < secret.MinPasswordLength || len(pw) > secret.MaxPasswordLength {
		return "", fmt.Errorf("the password must have %d to %d bytes", secret.MinPasswordLength, secret.MaxPasswordLength)
	}
	return secret.HashPassword(pw)
}

// printDashboard says where the dashboard is and, while no account exists,
// how to make one.
func printDashboard(ctx context.Context, w io.Writer, base string, a *app.App) error {
	users, err := a.Store.UserList(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Dashboard: %s%s/\n", base, dashboard.Path)
	if len(users) == 0 {
		fmt.Fprintln(w, "No dashboard account exists yet. Create one (the password is read from standard input):\n"+
			"  herald"+storeFlagsOf(a)+" user create --email you@example.com --password-stdin")
	}
	return nil
}

// storeFlagsOf repeats the store flags of this process for a command line
// to copy, without a database URL's password.
func storeFlagsOf(a *app.App) string {
	if a.Config.Postgres() {
		return " --database-url \"$HERALD_DATABASE_URL\""
	}
	if a.Config.DataDir != "" && a.Config.DataDir != "./herald-data" {
		return " --data-dir " + shellQuote(a.Config.DataDir)
	}
	return ""
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
