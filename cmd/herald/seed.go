package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/herald-notify/herald/internal/app"
)

// seedCommand is filled in by the seeding work.
func seedCommand(open func(context.Context) (*app.App, error), envFlag cli.Flag, stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{Name: "seed", Usage: "bulk-load benchmark data"}
}
