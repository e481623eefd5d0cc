package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/config"
)

// secretCommand manages the server secret.
func secretCommand(cfg *config.Config, stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "secret",
		Usage: "manage the server secret",
		Commands: []*cli.Command{
			{
				Name: "rotate",
				Usage: "re-encrypt every encrypted value of the store (credentials, secret configurations, stored answers, API key copies)" +
					" from the old server secret to the new one, in one transaction; stop every Herald process of the store first",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "old", Required: true, Usage: "the secret the store is encrypted with", Sources: cli.EnvVars("HERALD_OLD_SECRET")},
					&cli.StringFlag{Name: "new", Required: true, Usage: "the secret to encrypt it with (at least 16 characters)", Sources: cli.EnvVars("HERALD_NEW_SECRET")},
				},
				Action: func(ctx context.Context, c *cli.Command) error {
					r, err := app.RotateSecret(ctx, *cfg, c.String("old"), c.String("new"))
					if err != nil {
						return err
					}
					fmt.Fprintf(stdout, "re-encrypted %d integrations, %d stored answers and %d API key copies with the new secret\n",
						r.Integrations, r.IdempotentResponses, r.APIKeys)
					if r.SecretFile != "" {
						fmt.Fprintf(stdout, "%s now holds the new secret\n", r.SecretFile)
					} else {
						fmt.Fprintln(stdout, "start every Herald process of this store with the new secret (HERALD_SECRET)")
					}
					return nil
				},
			},
		},
	}
}
