package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/herald-notify/herald/internal/backup"
	"github.com/herald-notify/herald/internal/config"
)

// backupCommand writes a backup of the SQLite store beside a running server.
func backupCommand(cfg *config.Config, stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name: "backup",
		Usage: "write one file holding a consistent snapshot of the SQLite database and the data directory's secret," +
			" beside a running server (PostgreSQL: use pg_dump)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Required: true, Usage: "the backup file to write (refused when it exists)"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			ctx, stop := interruptible(ctx)
			defer stop()
			b, err := backup.Create(ctx, *cfg, c.String("out"), version)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s (%d bytes): the database at schema version %d as of %s\n",
				b.Path, b.Size, b.Manifest.SchemaVersion, b.Manifest.CreatedAt.Format(time.RFC3339))
			if b.SecretFile != "" {
				fmt.Fprintf(stdout, "with the server secret of %s: keep the file as safe as the secret itself\n", b.SecretFile)
			} else {
				fmt.Fprintln(stdout, "without the server secret: this server runs with HERALD_SECRET (there is no secret file in its data"+
					" directory); keep that secret with the backup: the restored server starts only with it")
			}
			return nil
		},
	}
}

// restoreCommand unpacks a backup into a new data directory.
func restoreCommand(cfg *config.Config, stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "restore",
		Usage: "restore a file of herald backup into the data directory, which must be absent or empty",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Required: true, Usage: "the backup file"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			ctx, stop := interruptible(ctx)
			defer stop()
			r, err := backup.Restore(ctx, *cfg, c.String("from"))
			if err != nil {
				return err
			}
			m := r.Manifest
			fmt.Fprintf(stdout, "restored into %s the backup of %s (herald %s, schema version %d)\n",
				r.DataDir, m.CreatedAt.Format(time.RFC3339), m.HeraldVersion, m.SchemaVersion)
			if m.Secret == nil {
				fmt.Fprintln(stdout, "the backup holds no server secret: start the restored server with the HERALD_SECRET of the server it was taken from")
			}
			fmt.Fprintf(stdout, "start it with: herald --data-dir %s serve\n", r.DataDir)
			return nil
		},
	}
}

// interruptible ends ctx at SIGINT or SIGTERM, so that an interrupted
// backup or restore removes its temporary files before it exits.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}
