// Command keepwatch helps find out why a config file, or a set of them,
// does or does not reload, inside a pod or on a laptop.
//
//	keepwatch watch PATH...    print each update the library delivers, until interrupted
//	keepwatch doctor PATH...   check each path's symlink chain, volume, mount and inotify
//
// Each PATH is taken the way the library reads it: a file as
// file.Provider(PATH); a directory as the set file.Glob(PATH/*), its files
// but dotfiles (in a kubelet volume, the ones ..data holds); a glob,
// quoted so that the shell leaves it alone, as file.Glob(PATH). The files
// of a file.Set are named with -set DIR NAME..., as the call names them:
//
//	keepwatch doctor -set /etc/authz policy.yaml roles.yaml
//
// A set is judged and watched as one: the doctor checks its directory (a
// kubelet volume or not) and each member's chain and file; watch prints
// one line per change of the whole set.
//
// doctor exits with status 1 when it finds a problem that stops hot reload
// (a single-file mount whose source was replaced, a subPath mount of a
// directory, a missing or unreadable file), 0 otherwise: a single file
// mounted on its own (a Kubernetes subPath, docker's -v of a file) is
// warned of, for edits in place of its source do arrive; both exit
// with status 2 on a usage error. Both take -wait for a program that gives
// file.WithWaitForPath: a PATH that does not exist yet is waited for.
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
  keepwatch watch [flags] PATH...    print each update delivered for each PATH, until interrupted
  keepwatch doctor [flags] PATH...   check each PATH's symlinks, volume, mount and inotify

PATH is a file, a directory (read as the set of its files, file.Glob(DIR/*)),
or a quoted glob ('/etc/app/conf.d/*.yaml', file.Glob); -set DIR NAME...
names the files of one file.Set.

Run "keepwatch COMMAND -h" for a command's flags.
`

// errUsage ends a command with exit status 2; its usage was printed.
var errUsage = errors.New("usage")

// errProblems ends doctor with exit status 1: it found a problem that stops
// hot reload, and said so.
var errProblems = errors.New("problems found")

func main() {
	// watch ends its watches on a signal and prints their last lines;
	// doctor, one pass that holds nothing, is ended by one at once, as any
	// program is, even inside a system call that waits (a file on a hung
	// network filesystem).
	ctx, stop := context.Background(), func() {}
	if len(os.Args) > 1 && os.Args[1] == "watch" {
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	}
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
