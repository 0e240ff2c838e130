// Command keepwatch helps find out why a config file does or does not
// reload, inside a pod or on a laptop.
//
//	keepwatch watch PATH    print each update the library delivers, until interrupted
//	keepwatch doctor PATH   check the path's symlink chain, volume, mount and inotify
//
// doctor exits with status 1 when it finds a problem that stops hot reload
// (a subPath mount, a missing or unreadable file), 0 otherwise; both exit
// with status 2 on a usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `keepwatch: see why a config file does or does not reload.

Usage:
  keepwatch watch [flags] PATH    print each update delivered for PATH, until interrupted
  keepwatch doctor [flags] PATH   check PATH's symlinks, volume, mount and inotify

Run "keepwatch COMMAND -h" for a command's flags.
`

// errUsage ends a command with exit status 2; its usage was printed.
var errUsage = errors.New("usage")

// errProblems ends doctor with exit status 1: it found a problem that stops
// hot reload, and said so.
var errProblems = errors.New("problems found")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "watch":
		err = watchCmd(ctx, args[1:], stdout, stderr)
	case "doctor":
		err = doctorCmd(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "keepwatch: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errProblems):
		return 1
	}
	fmt.Fprintln(stderr, "keepwatch:", err)
	return 1
}

// parseFlags parses a command's flags and returns its one PATH argument.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (string, error) {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", errUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "keepwatch %s: want one PATH, got %d arguments\n", fs.Name(), fs.NArg())
		fs.Usage()
		return "", errUsage
	}
	return fs.Arg(0), nil
}

// usageFunc prints a command's synopsis, what it does, and its flags.
func usageFunc(fs *flag.FlagSet, synopsis, about string) func() {
	return func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: keepwatch %s\n\n%s\n", synopsis, about)
		if hasFlags(fs) {
			fmt.Fprintln(out, "\nFlags:")
			fs.PrintDefaults()
		}
	}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}
