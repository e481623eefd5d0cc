package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/store"
)

// environmentCommand shows environments (with the application identifiers
// of the inbox clients) and changes their settings.
func environmentCommand(open func(context.Context) (*app.App, error), envFlag cli.Flag, stdout io.Writer) *cli.Command {
	withApp := func(fn func(ctx context.Context, a *app.App, c *cli.Command) error) cli.ActionFunc {
		return withStore(open, fn)
	}
	return &cli.Command{
		Name:  "environment",
		Usage: "show environments and their application identifiers, change their settings",
		Commands: []*cli.Command{
			{
				Name: "list", Usage: "list the environments: name, application identifier (applicationIdentifier of the inbox clients), subscriberHash setting",
				Action: withApp(func(ctx context.Context, a *app.App, _ *cli.Command) error {
					dev, err := a.Store.EnvironmentGetByName(ctx, "development")
					if err != nil {
						return fmt.Errorf("environments: %w", err)
					}
					envs, err := a.Store.EnvironmentList(ctx, dev.OrganizationID)
					if err != nil {
						return err
					}
					tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "NAME\tIDENTIFIER\tID\tSUBSCRIBER HASH")
					for _, e := range envs {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Name, e.Identifier, e.ID, hmacSetting(e))
					}
					return tw.Flush()
				}),
			},
			{
				Name: "set", Usage: "change an environment's settings",
				Flags: []cli.Flag{envFlag, &cli.BoolFlag{Name: "hmac", Value: true,
					Usage: "require subscriberHash on inbox sessions; --hmac=false is for local development only: anyone who knows the" +
						" application identifier can then open any subscriber's inbox"}},
				Action: withApp(func(ctx context.Context, a *app.App, c *cli.Command) error {
					if !c.IsSet("hmac") {
						return errors.New("nothing to set: give --hmac=true or --hmac=false")
					}
					env, err := a.Store.EnvironmentGetByName(ctx, c.String("environment"))
					if err != nil {
						return fmt.Errorf("environment %q: %w", c.String("environment"), err)
					}
					disabled := !c.Bool("hmac")
					env, err = a.Store.EnvironmentUpdate(ctx, &store.EnvironmentUpdateParams{ID: env.ID, InboxHMACDisabled: &disabled})
					if err != nil {
						return err
					}
					fmt.Fprintf(stdout, "%s: subscriberHash %s\n", env.Name, hmacSetting(env))
					if disabled {
						fmt.Fprintln(stdout, "warning: anyone who knows the application identifier "+env.Identifier+
							" can now open any subscriber's inbox; use this for local development only")
					}
					return nil
				}),
			},
		},
	}
}

func hmacSetting(e store.Environment) string {
	if e.InboxHMACDisabled {
		return "not required (local development)"
	}
	return "required"
}

// withStore is a command's action that opens the store (as first start
// leaves it: Bootstrap) for fn and closes it after.
func withStore(open func(context.Context) (*app.App, error), fn func(ctx context.Context, a *app.App, c *cli.Command) error) cli.ActionFunc {
	return func(ctx context.Context, c *cli.Command) error {
		a, err := open(ctx)
		if err != nil {
			return err
		}
		defer a.Close()
		if _, err := a.Bootstrap(ctx); err != nil {
			return err
		}
		return fn(ctx, a, c)
	}
}
