package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/herald-notify/herald/internal/app"
)

// console is where serve writes for the person who started it. The API
// keys of a first start go to a terminal only, never to standard output
// that may be a log file, nor to the log stream.
type console struct {
	out io.Writer // standard output: the banner
	log io.Writer // standard error: the log stream
	// terminal returns a terminal to show secrets on, or nil when the
	// process has none.
	terminal func() io.WriteCloser
}

// systemConsole shows secrets on standard output when it is a terminal,
// else on the process's controlling terminal (/dev/tty) when it has one.
func systemConsole(stdout, stderr io.Writer) console {
	return console{out: stdout, log: stderr, terminal: func() io.WriteCloser {
		if f, ok := stdout.(*os.File); ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
			return nopCloser{f}
		}
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			return tty
		}
		return nil
	}}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// keysFileName is the file of the data directory that holds a first
// start's API keys when there is no terminal to show them on.
const keysFileName = "first-start-api-keys.txt"

// showFirstStartKeys shows the API keys of a first start on the terminal;
// without one (a service, a container) it writes them to a file of the data
// directory that only its owner can read, and prints and logs only its path.
func showFirstStartKeys(c console, dataDir, base string, first *app.FirstStart, log *slog.Logger) {
	if t := c.terminal(); t != nil {
		defer t.Close()
		fmt.Fprintln(t, "First start: created the development and production environments. Their API keys (shown only now):")
		writeKeys(t, first)
		fmt.Fprintf(t, "Try it:\n  curl -s -X POST %s/v2/subscribers -H 'Authorization: ApiKey %s' \\\n"+
			"    -H 'Content-Type: application/json' -d '{\"subscriberId\":\"user-1\",\"email\":\"ada@example.com\"}'\n",
			base, first.Keys["development"])
		return
	}
	path := filepath.Join(dataDir, keysFileName)
	if err := writeKeysFile(path, first); err != nil {
		log.Error("first start: no terminal to show the API keys on, and they could not be written to a file;"+
			" make new ones with: herald keys create --environment development", "path", path, "err", err)
		return
	}
	fmt.Fprintf(c.out, "First start: created the development and production environments. With no terminal to show their"+
		" API keys on, they are in %s (readable only by this user): read it, then delete it.\n", path)
	log.Warn("first start: the API keys are in a file readable only by this user; read it, then delete it", "path", path)
}

func writeKeys(w io.Writer, first *app.FirstStart) {
	for _, env := range []string{"development", "production"} {
		fmt.Fprintf(w, "  %-12s %s\n", env, first.Keys[env])
	}
}

// writeKeysFile writes the keys to a new file only its owner can read.
func writeKeysFile(path string, first *app.FirstStart) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// A file left by an earlier first start (of a store since emptied) may
	// have other permissions: never write keys into it.
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "Herald first start, %s: the API keys of the new environments (shown only here).\n"+
		"Keep them somewhere safe, then delete this file.\n", time.Now().UTC().Format(time.RFC3339))
	writeKeys(f, first)
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
