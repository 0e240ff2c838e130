package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	keepwatch "github.com/keepwatch/file"
	"github.com/keepwatch/file/internal/chain"
	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/filemount"
	"github.com/keepwatch/file/internal/fsinfo"
	"github.com/keepwatch/file/internal/mountinfo"
	"github.com/keepwatch/file/internal/writers"
)

const doctorAbout = `Checks what decides whether changes reach a running process: the symlink
chain to each file, whether it lives in a kubelet volume (ConfigMap,
Secret, projected), whether it is a single file mounted on its own (a
Kubernetes subPath, docker's -v of a file: edits in place of its source
arrive, a replacement does not) and whether its source was replaced, the
filesystem and whether file events work there, and the inotify instances
and watches in use against the limits. For a set (a directory, a glob, or
-set) it judges the directory as file.Set and file.Glob read it: kubelet
volume or not, and each member's chain and file. Off Linux it says which of
these it cannot check. Exits 1 if it finds a problem that stops hot reload
(a mount's source replaced among them), 0 otherwise.

` + pathsHelp

// severity of a finding.
type severity int

const (
	info severity = iota
	ok
	warn
	problem
)

func (s severity) String() string {
	return [...]string{"", "ok", "warn", "PROBLEM"}[s]
}

// report collects the doctor's findings and prints them as it goes.
type report struct {
	out       io.Writer
	worst     severity
	mounted   int              // the warnings that a file is a single file mounted on its own
	unchecked []string         // the checks it could not make here
	current   string           // the target being judged
	troubled  []string         // the targets with a problem, in order
	count     [problem + 1]int // the findings of each severity
	said      map[string]bool  // findings made once for all the targets, by key
	wait      bool             // judged as a program giving file.WithWaitForPath
}

// once reports whether the finding of key was made already, and notes it.
func (r *report) once(key string) bool {
	if r.said[key] {
		return true
	}
	if r.said == nil {
		r.said = map[string]bool{}
	}
	r.said[key] = true
	return false
}

func (r *report) add(s severity, check, format string, args ...any) {
	r.worst = max(r.worst, s)
	r.count[s]++
	if s == problem && !slices.Contains(r.troubled, r.current) {
		r.troubled = append(r.troubled, r.current)
	}
	fmt.Fprintf(r.out, "%-8s %-11s %s\n", s, check, fmt.Sprintf(format, args...))
}

// skip says that a check cannot be made here, and why; the verdict names
// it, so that a pass is never claimed for what was not checked.
func (r *report) skip(check, format string, args ...any) {
	if !slices.Contains(r.unchecked, check) {
		r.unchecked = append(r.unchecked, check)
	}
	r.add(info, check, "not checked on "+runtime.GOOS+": "+format, args...)
}

func doctorCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.Usage = usageFunc(fs, "doctor [flags] PATH...\n       keepwatch doctor [flags] -set DIR NAME...", doctorAbout)
	table := fs.String("mountinfo", mountinfo.Path, "mount table to read (copy a pod's /proc/1/mountinfo to check it elsewhere)")
	maxSize := fs.Int64("max-size", 16<<20, "the largest file (or set, all its files together) the provider will read")
	setDir := fs.String("set", "", "judge the arguments as the files of one file.Set in `DIR`, named relative to it")
	wait := fs.Bool("wait", false, "judge as a program that gives file.WithWaitForPath: a PATH that does not exist yet is waited for, not a problem")
	targets, err := parseTargets(fs, setDir, args, stderr)
	if err != nil {
		return err
	}

	r := &report{out: stdout, wait: *wait}
	fmt.Fprintf(stdout, "keepwatch doctor %s\n", strings.Join(args, " "))
	for _, t := range targets {
		fmt.Fprintf(stdout, "\n%s: %s\n", t.arg, t.what())
		r.current = t.arg
		if t.kind == single {
			r.single(t.path, *maxSize, *table)
		} else {
			r.set(t, *maxSize, *table)
		}
	}
	fmt.Fprintln(stdout)
	r.current = ""
	r.limits()

	fmt.Fprintln(stdout)
	switch {
	case r.worst == problem:
		in := ""
		if len(targets) > 1 {
			in = " (in " + strings.Join(r.troubled, ", ") + ")"
		}
		fmt.Fprintf(stdout, "verdict: hot reload will NOT work until the problems above are fixed%s\n", in)
		return errProblems
	case r.mounted > 0:
		more := ""
		if r.count[warn] > r.mounted {
			more = "; read the other warnings above"
		}
		fmt.Fprintf(stdout, "verdict: hot reload will work for edits in place only: a replacement of the mounted file does not arrive; mount the directory instead%s\n", more)
	case r.worst == warn:
		fmt.Fprintln(stdout, "verdict: hot reload will work with keepwatch; read the warnings above")
	default:
		fmt.Fprintln(stdout, "verdict: hot reload will work")
	}
	if len(r.unchecked) > 0 {
		fmt.Fprintf(stdout, "         as far as checked: %s not checked on %s\n", strings.Join(r.unchecked, ", "), runtime.GOOS)
	}
	return nil
}

// single judges one file, as file.Provider reads it.
func (r *report) single(abs string, maxSize int64, table string) {
	c := r.chain(abs)
	r.file(c.Real, maxSize)
	r.access(abs, c.Real)
	r.writers(c.Real)
	r.watchStarts(keepwatch.Provider(abs, r.probing()...))
	r.layout(abs)
	r.mount(abs, c.Real, table)
	// Where the file is, or where its resolution stopped: the filesystem
	// there is the one whose events matter, as for the library.
	r.filesystem(c.Home())
	var files []string
	if c.Real != "" {
		files = append(files, c.Real)
	}
	r.events(c.Home(), files)
}

// chain prints each symlink from abs to the file and returns the
// resolution; its Real is "" if the file cannot be reached. It resolves the
// path with the library's own resolver, so it sees what the watch sees.
func (r *report) chain(abs string) chain.Chain {
	c := chain.Resolve(abs, nil)
	r.hops(&c)
	return c
}

// hops prints a resolution's symlinks, and where it ends or why it failed.
// A loop is printed once round, up to the link it comes back to.
func (r *report) hops(c *chain.Chain) {
	seen := map[string]bool{}
	for i, h := range c.Hops {
		label := ""
		if i == 0 {
			label = "chain"
		}
		if seen[h.Link+"\x00"+h.Target] {
			r.add(info, label, "%s -> %s again, and so on: a loop", h.Link, h.Target)
			break
		}
		seen[h.Link+"\x00"+h.Target] = true
		r.add(info, label, "%s -> %s", h.Link, h.Target)
	}
	switch {
	case c.Err != nil && errors.Is(c.Err, syscall.ELOOP):
		r.add(problem, "chain", "%v: a symlink loop, which nothing the program can do gets past; fix the links", c.Err)
	case c.Err != nil && r.wait && errors.Is(c.Err, fs.ErrNotExist):
		r.add(warn, "chain", "%v: not there yet; with file.WithWaitForPath() the watch waits for it and reads it when it comes", c.Err)
	case c.Err != nil:
		r.add(problem, "chain", "%v", c.Err)
	case len(c.Hops) == 0:
		r.add(info, "chain", "no symlinks: %s", c.Real)
	default:
		r.add(info, "", "= %s", c.Real)
	}
}

// probing are the options of the watch the doctor starts to see whether
// Watch starts: polled, so that it takes no inotify instance of the
// process's (which the limits check counts), and quiet.
var probing = []keepwatch.Option{keepwatch.WithPolling(time.Hour), keepwatch.WithRecheckInterval(0),
	keepwatch.WithLogger(slog.New(slog.DiscardHandler))}

// probing gives the probe's options, with WithWaitForPath where the
// program being judged gives it (-wait).
func (r *report) probing() []keepwatch.Option {
	if r.wait {
		return append(slices.Clip(probing), keepwatch.WithWaitForPath())
	}
	return probing
}

// watchStarts asks the library whether Watch starts on the target now, and
// says so if it does not: on a path that does not resolve, Watch fails as
// the stock provider's does, unless the program gives WithWaitForPath.
func (r *report) watchStarts(p provider) {
	err := p.WatchWithContext(context.Background(), func(any, error) {})
	switch {
	case errors.Is(err, syscall.ELOOP):
		// WithWaitForPath would start it, to wait for a path that never
		// comes: the loop is the links' to fix.
		r.add(problem, "watch", "Watch fails now: %v (as koanf's stock provider's); no option gets past a symlink loop", err)
		return
	case err != nil:
		r.add(problem, "watch", "Watch fails now: %v (as koanf's stock provider's); with file.WithWaitForPath() it starts, and waits for the path", err)
		return
	}
	_ = p.Shutdown(context.Background())
}

func (r *report) file(real string, maxSize int64) {
	if real == "" {
		return
	}
	f := keepwatch.Provider(real, keepwatch.WithMaxSize(maxSize))
	data, err := f.ReadBytes()
	switch {
	case errors.Is(err, keepwatch.ErrNotRegularFile):
		r.add(problem, "file", "%s is not a regular file: nothing can be loaded from it", real)
	case errors.Is(err, keepwatch.ErrFileTooLarge):
		r.add(problem, "file", "larger than %d bytes, the provider's limit (WithMaxSize)", maxSize)
	case err != nil:
		r.add(problem, "file", "%v", err)
	case len(data) == 0:
		r.add(warn, "file", "regular, but empty")
	default:
		r.add(ok, "file", "regular, %d bytes, readable", len(data))
	}
}

// writers says whether the kernel tells, to this process, who holds the
// file open for writing, as the library asks it where its count of the
// file's openers has not begun: where it does, a writer no event told of
// is waited for until its close; where it does not, it is given a short
// pause (reliability.md). And whether the file's change times tell every
// change: where they do, no read of the watch holds a writer's open; where
// they do not, the first read of a file new to the watch holds writers
// out for the read.
func (r *report) writers(real string) {
	if real == "" {
		return
	}
	// Not blocking: a FIFO put in the file's place since file looked would
	// wait for a writer, and a writer's lease would hold the doctor.
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return // file has said why
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return // file said it is not a regular file
	}
	a, err := writers.On(int(f.Fd()), 0) // 0: no mount ID; the doctor asks once
	switch {
	case a == decide.WritersOpen:
		r.add(warn, "writers", "someone holds the file open for writing now: the watch waits for its close (or a second without a write) before it reads")
	case a == decide.WritersNone:
		r.add(ok, "writers", "the kernel says who holds the file open for writing, to uid %d: a writer no event told of is waited for until its close; an edit in place is read by the count of the file's opens and closes, with no lease", os.Getuid())
	case errors.Is(err, writers.ErrElsewhere):
		r.add(info, "writers", "on a network or FUSE filesystem the kernel knows only this host's writers, so it is not asked: the file is polled, and a change a poll finds is read once it has gone the quiet window without a write (reliability.md)")
		return
	case errors.Is(err, writers.ErrNotSupported):
		r.add(info, "writers", "the kernel does not say who holds a file open for writing on %s: a writer no event told of is given %s (reliability.md)", runtime.GOOS, unheardPause)
		return
	case errors.Is(err, syscall.EACCES):
		r.add(info, "writers", "the kernel does not tell uid %d who holds the file open for writing (not its owner%s, and no CAP_LEASE): a writer no event told of is given %s, and an edit in place is read by the count of the file's opens and closes once a read was accepted (reliability.md)",
			os.Getuid(), fileOwner(f), unheardPause)
	default:
		r.add(info, "writers", "the kernel does not say who holds the file open for writing (%v: leases off, /proc/sys/fs/leases-enable, or none on this filesystem): a writer no event told of is given %s (reliability.md)",
			err, unheardPause)
	}
	r.changeTimes(f)
}

// changeTimes says whether the filesystem gives every change made after a
// stat a change time of its own: then the lease a read of a file new to
// the watch asks is let go at once, and no read holds a writer up; else it
// is held through that read (reliability.md).
func (r *report) changeTimes(f *os.File) {
	if runtime.GOOS != "linux" {
		return
	}
	if fsinfo.FineTimesAt(int(f.Fd()), 0) {
		r.add(ok, "times", "fine (every change after a stat gets one of its own): no read of the watch holds a writer's open")
		return
	}
	r.add(info, "times", "coarse on this kernel or filesystem (fine since Linux 6.13 on ext4, xfs, btrfs, tmpfs): the first read of a file new to the watch holds a writer's open for the read, or for as long as this process is stopped during it (reliability.md)")
}

// unheardPause is decide.UnheardWriterPause, as the doctor tells it.
const unheardPause = "25 ms"

// layout tells a kubelet volume by its ..data link, and whether the path
// goes through it, which is what makes updates visible.
func (r *report) layout(abs string) {
	dir := filepath.Dir(abs)
	data := filepath.Join(dir, "..data")
	target, err := os.Readlink(data)
	if err != nil {
		r.noDataLink(dir, err, "")
		return
	}
	if !r.dataLeads(dir, target) {
		return
	}
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		r.add(problem, "layout", "kubelet volume (ConfigMap, Secret or projected) with no key %s: its keys are %s", filepath.Base(abs), volumeKeys(dir))
		return
	}
	via, _ := os.Readlink(abs)
	if strings.HasPrefix(filepath.Clean(via), "..data"+string(filepath.Separator)) {
		r.add(ok, "layout", "kubelet volume (ConfigMap, Secret or projected): ..data -> %s; updates arrive as a ..data swap, which keepwatch follows", target)
		return
	}
	r.add(warn, "layout", "kubelet volume, but %s does not lead through ..data: kubelet updates will not show through it", filepath.Base(abs))
}

// noDataLink says why dir has no ..data link: there is none, or the
// doctor may not look, which it then does not claim.
func (r *report) noDataLink(dir string, err error, more string) {
	switch {
	case errors.Is(err, fs.ErrPermission):
		r.add(info, "layout", "not checked: %s may not look in %s for a ..data link", whoAmI(), dir)
	case errors.Is(err, fs.ErrNotExist):
		r.add(info, "layout", "not a kubelet volume (no ..data link in %s)%s", dir, more)
	default:
		r.add(info, "layout", "not a kubelet volume (%s/..data is not a link: %v)%s", dir, err, more)
	}
}

// dataLeads reports whether dir's ..data link, to target, leads to a
// directory, as kubelet's does to its payload, and says what is wrong if
// it does not: a loop (..data -> ..data), or nothing there.
func (r *report) dataLeads(dir, target string) bool {
	fi, err := os.Stat(filepath.Join(dir, "..data"))
	switch {
	case errors.Is(err, syscall.ELOOP):
		r.add(problem, "layout", "..data -> %s is a symlink loop, not a kubelet volume's link to its payload: nothing under it can be read", target)
	case err != nil:
		r.add(problem, "layout", "..data -> %s leads nowhere (%v): nothing under it can be read", target, explain(err))
	case !fi.IsDir():
		r.add(problem, "layout", "..data -> %s is not a directory, as a kubelet volume's payload is", target)
	default:
		return true
	}
	return false
}

// volumeKeys lists the keys of the kubelet volume dir: the files of the
// payload ..data leads to, as a pod sees them.
func volumeKeys(dir string) string {
	entries, err := os.ReadDir(filepath.Join(dir, "..data"))
	if err != nil {
		return fmt.Sprintf("unknown (%v)", err)
	}
	var keys []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "..") {
			keys = append(keys, e.Name())
		}
	}
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}

// mountTable reads the mount table, or says why it cannot.
func (r *report) mountTable(table string) ([]mountinfo.Mount, bool) {
	if table == mountinfo.Path && !hasMountTable {
		r.skip(fileMountCheck, "no mount table here; run the doctor in the container, or pass a copy of its /proc/1/mountinfo with -mountinfo")
		return nil, false
	}
	mounts, err := mountinfo.ReadFile(table)
	if err != nil {
		r.add(info, "mount", "mount table unavailable: %v", err)
		return nil, false
	}
	return mounts, true
}

func (r *report) mount(abs, real, table string) {
	mounts, found := r.mountTable(table)
	if !found {
		return
	}
	realDir := ""
	if real != "" {
		realDir = filepath.Dir(real)
	}
	if !r.fileMount(mounts, abs, real) && !r.dirMount(mounts, filepath.Dir(abs), realDir) {
		r.add(ok, fileMountCheck, "not a single file mounted on its own")
	}
	r.containing(mounts, abs)
}

// fileMountCheck names the check of a single file mounted on its own.
const fileMountCheck = "file mount"

// fileMount reports a single file mounted on its own (a Kubernetes
// subPath, docker's -v of a file), at abs or where it resolves to, and
// whether there is one: edits in place of its source arrive, so hot
// reload works for them, and a replacement does not; its source replaced
// already is a problem, judged as the library judges it
// (internal/filemount).
func (r *report) fileMount(mounts []mountinfo.Mount, abs, real string) bool {
	paths := []string{abs}
	if real != "" && real != abs {
		paths = append(paths, real)
	}
	m, found := mountinfo.FileMount(mounts, paths...)
	if !found {
		return false
	}
	f := filemount.Facts{Mounted: true, Root: m.Root}
	f.Links, f.Resolves = links(m.Point)
	source := filemount.Source(m.Root)
	if filemount.Judge(f) == filemount.Replaced {
		r.add(problem, fileMountCheck, "%s is a single file mounted on its own, and its source was replaced on the host side (%s): the mount keeps the old file, and no change reaches it until the mount is made again (restart the container); mount the directory instead",
			m.Point, replacedBy(m.Root, f))
		return true
	}
	r.mounted++
	if mountinfo.IsSubPath(m) {
		r.add(warn, fileMountCheck, "%s is a single file mounted on its own (from %s): a Kubernetes subPath mount; kubelet's updates of its ConfigMap or Secret replace the file, and never arrive (the mount keeps the old file until the container restarts); an edit in place of its source does arrive; mount the volume as a directory instead",
			m.Point, source)
		return true
	}
	r.add(warn, fileMountCheck, "%s is a single file mounted on its own (from %s): an edit in place of its source arrives; a replacement of the source (sed -i, most editors' saves, mv) never does, and the mount keeps the old file until the container restarts; mount the directory instead",
		m.Point, source)
	return true
}

// replacedBy says what shows that a mount's source was replaced.
func replacedBy(root string, f filemount.Facts) string {
	var why []string
	if f.Root != filemount.Source(f.Root) {
		why = append(why, "the mount table shows "+root)
	}
	if f.Resolves && f.Links == 0 {
		why = append(why, "the file it holds has no name left")
	}
	return strings.Join(why, "; ")
}

// containing names the mount path lives in, and the kind of volume.
func (r *report) containing(mounts []mountinfo.Mount, path string) {
	if m, found := mountinfo.Containing(mounts, path); found {
		kind := mountinfo.VolumeKind(m)
		if kind != "" {
			kind = ", kubernetes.io~" + kind
		}
		r.add(info, "mount", "%s: %s from %s%s", m.Point, m.FSType, m.Root, kind)
	}
}

func (r *report) filesystem(dir string) {
	name, noEvents := fsinfo.Type(dir)
	switch {
	case name == "" && !hasFSTypes:
		r.skip("filesystem", "the filesystem's type, and whether it delivers events for remote changes (NFS, SMB, FUSE do not), are known on Linux only")
	case name == "":
		r.add(info, "filesystem", "unknown type at %s", dir)
	case noEvents:
		r.add(warn, "filesystem", "%s: no inotify events for changes made elsewhere (another host, a FUSE daemon); keepwatch polls at its re-check interval, koanf's stock provider never sees them", name)
	case name == "overlay":
		r.add(ok, "filesystem", "overlay: events for changes made through this mount; changes made to its lower layers underneath are not seen")
	default:
		r.add(ok, "filesystem", "%s: inotify delivers events", name)
	}
}

// events checks that a watch can be placed where the file lives, with the
// OS's own file events (eventAPI), and says how the library would watch:
// as it does (watch_loop.go, blind), it does without a directory that
// refuses a watch for want of permission (one this user may enter but not
// list, 0711, or not enter at all) where another watch stands in for it:
// one of the files, or, while no file can be reached, the directory above,
// which tells when the directory opens. Only where none does, it polls.
func (r *report) events(dir string, files []string) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		r.add(warn, eventCheck, "cannot create an instance (%v): keepwatch falls back to polling", explain(err))
		return
	}
	defer w.Close()
	err = w.Add(dir)
	switch {
	case err == nil:
		r.add(ok, eventCheck, "a watch on %s works (%s)", dir, eventAPI)
		return
	case !errors.Is(err, fs.ErrPermission):
		r.add(warn, eventCheck, "cannot watch %s (%v): keepwatch falls back to polling", dir, explain(err))
		return
	}
	refused := fmt.Sprintf("%s cannot be watched by %s: %v", dir, whoAmI(), explain(err))
	if d := describe(dir, ""); d != "" {
		refused = fmt.Sprintf("%s (%s) cannot be watched by %s: %v", dir, d, whoAmI(), explain(err))
	}
	for _, f := range files {
		if w.Add(f) == nil {
			r.add(ok, eventCheck, "%s; a watch on the file itself works (%s), and keepwatch watches it there, on events", refused, eventAPI)
			return
		}
	}
	if above := filepath.Dir(dir); len(files) == 0 && above != dir && w.Add(above) == nil {
		r.add(info, eventCheck, "%s; keepwatch watches %s (%s) until it can be entered", refused, above, eventAPI)
		return
	}
	r.add(warn, eventCheck, "%s, nor the file itself: keepwatch falls back to polling", refused)
}

func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
