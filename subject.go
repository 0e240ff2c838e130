package file

import (
	"errors"
	"hash/fnv"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/keepwatch/file/internal/chain"
	"github.com/keepwatch/file/internal/decide"
	"github.com/keepwatch/file/internal/osfile"
)

// subject is what a watch reads and watches: one file (fileSubject) or a
// set of files read as one (setSubject).
type subject interface {
	// resolve looks up, now, everything the subject's content depends on,
	// calling before with each path before it looks it up. Given prev, an
	// earlier resolution, and changed, which reports the paths that
	// changed since, it may look up only what follows the first of them,
	// and build the new resolution in prev's storage.
	resolve(before func(path string), prev *resolution, changed map[string]bool) resolution
	// resolveAgain is resolve from prev on, leaving prev as it was: to
	// compare the two.
	resolveAgain(before func(path string), prev *resolution, changed map[string]bool) resolution
	// read reads the subject. via, if not nil, is the resolution made just
	// before: the read takes from it what it already found; with first, it
	// is the last one, made before the events the read is for, and the
	// read goes by the kernel's walk of the path, and a kubelet volume's
	// ..data as it is now. With probe, it asks the kernel whether anyone
	// holds a file it read open for writing.
	read(why decide.Reason, via *resolution, probe, first bool) reading
	// stat sums up the stat of everything read, for the cheap re-check: a
	// change of content that leaves it alike is not looked for.
	stat() decide.Signature
	// stamp is the stamp of the one file the subject reads, where the path
	// leads now (osfile.StampOf); zero for a set, or if it cannot be stat'ed.
	stamp() decide.Stamp
	// empty reports whether what a read found is nothing, or a part of it
	// nothing: an empty file, a set with no files or with a file empty.
	empty(c *content) bool
	// paths lists the files the subject reads, as given: where a subPath
	// mount would be.
	paths() []string
}

// target is what a watch watches and how: the subject, the name it goes
// by, and the options.
type target struct {
	path string // names the subject in events, logs and Stats
	subj subject
	opts *options
}

// resolution is one resolution of a subject: what the decider is told it
// depends on (decide.Resolution), and what the loop keeps to read through
// it and to resume it.
type resolution struct {
	decide.Resolution
	entries string // a directory any of whose entries matching match matters; "" if none
	match   func(string) bool
	gen     string      // what DataLink pointed to: the payload the subject is read from
	swapped time.Time   // when DataLink was made: when that payload was swapped in
	chain   chain.Chain // the resolution of one file, to be resumed; none for a set
}

// setHome sets where the subject lives, and the directory above it.
func (r *resolution) setHome(home string) {
	r.Home, r.HomeParent = home, ""
	if home != "" {
		r.HomeParent = filepath.Dir(home)
	}
}

// setEntries makes every entry of dir whose name match accepts matter.
func (r *resolution) setEntries(dir string, match func(string) bool) {
	r.entries, r.match = dir, match
	r.InEntries = func(path string) bool { return filepath.Dir(path) == dir && match(filepath.Base(path)) }
}

// same reports whether two resolutions lead the same way through the same
// names: for one file, its chain's; for a set, the names and directories
// of all its files'.
func (r *resolution) same(o *resolution) bool {
	if r.One && o.One {
		return r.chain.Same(&o.chain)
	}
	return maps.Equal(r.Names, o.Names) && r.entries == o.entries && slices.Equal(r.Dirs, o.Dirs) &&
		slices.Equal(r.Searched, o.Searched) && slices.Equal(r.Files, o.Files)
}

// inPayload returns where the one file the resolution found is in the
// payload its ..data named: a key's path below the payload's directory. It
// reports false outside a kubelet volume, and for a file the resolution
// found elsewhere (a key that links out of its payload).
func (r *resolution) inPayload() (string, bool) {
	if r.DataLink == "" || len(r.Files) != 1 || !isPayload(r.gen) {
		return "", false
	}
	// Files[0] is vol/gen/rel, all of it symlink-free and clean: cut, not
	// joined, on the way to the callback.
	const sep = string(filepath.Separator)
	dir := filepath.Dir(r.DataLink)
	rest, ok := strings.CutPrefix(r.Files[0], dir)
	if ok && !strings.HasSuffix(dir, sep) { // a root ends in one already
		rest, ok = strings.CutPrefix(rest, sep)
	}
	if ok {
		rest, ok = strings.CutPrefix(rest, r.gen)
	}
	if ok {
		rest, ok = strings.CutPrefix(rest, sep)
	}
	return rest, ok && rest != ""
}

// want lists what the notifier is asked for: every name, and the entries
// of the entries directory, as the path with a trailing separator.
func (r *resolution) want() map[string]bool {
	if r.entries == "" {
		return r.Names
	}
	w := maps.Clone(r.Names)
	w[r.entries+string(filepath.Separator)] = true
	return w
}

// signOf adds one stat to a signature: the file's identity, size and
// modification time, and the name it was read under.
func signOf(sig decide.Signature, name string, info fs.FileInfo) decide.Signature {
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		h.Write(b[:])
	}
	put(uint64(sig))
	h.Write([]byte(name))
	dev, ino := osfile.ID(info)
	put(dev)
	put(ino)
	put(uint64(info.Size()))
	put(uint64(info.ModTime().UnixNano()))
	return decide.Signature(h.Sum64() | 1) // never zero: zero means no stat
}

// fileSubject is one file.
type fileSubject struct {
	path    string // as given, cleaned: names the file in errors
	abs     string // absolute, not cleaned: resolved as the kernel does
	maxSize int64
}

func (f *fileSubject) resolve(before func(string), prev *resolution, changed map[string]bool) resolution {
	var c chain.Chain
	if prev != nil && prev.One && changed != nil {
		c = chain.ResumeReusing(f.abs, &prev.chain, func(p string) bool { return changed[p] }, before)
	} else {
		c = chain.Resolve(f.abs, before)
	}
	return f.resolution(c, prev, changed)
}

func (f *fileSubject) resolveAgain(before func(string), prev *resolution, changed map[string]bool) resolution {
	c := chain.Resume(f.abs, &prev.chain, func(p string) bool { return changed[p] }, before)
	return f.resolution(c, nil, nil)
}

// resolution is what the chain c says the subject depends on; given prev,
// the resolution c was resumed from, in its storage.
func (f *fileSubject) resolution(c chain.Chain, prev *resolution, changed map[string]bool) resolution {
	r := resolution{Resolution: decide.Resolution{Names: c.Names, Dirs: c.Dirs, Searched: c.Searched, Atomic: true, One: true, File: c.RealInfo}, chain: c}
	r.setHome(c.Home())
	switch {
	case prev != nil && len(prev.Files) == 1 && prev.Files[0] == c.Real:
		r.Files = prev.Files // the same file's name: no slice to make on every write
	case c.Real != "" && prev != nil && changed != nil && cap(prev.Files) > 0:
		// A resumed resolution takes over the last one's storage (see
		// chain.ResumeReusing): its slice of one name too.
		r.Files = append(prev.Files[:0], c.Real)
	case c.Real != "":
		r.Files = []string{c.Real}
	}
	for _, h := range c.Hops {
		if filepath.Base(h.Link) == dataLink {
			r.DataLink, r.gen, r.swapped = h.Link, h.Target, h.ModTime
			break
		}
	}
	return r
}

// read reads the file. In a kubelet volume it reads it from the payload
// the resolution via found ..data to name (see generation.go), and names
// that payload as its generation; elsewhere it reads the path. Without a
// resolution, a file whose directory holds no ..data is read at once (the
// common case: ReadBytes on a plain file costs what os.ReadFile does), and
// one beside a ..data link is resolved first.
func (f *fileSubject) read(why decide.Reason, via *resolution, probe, first bool) reading {
	if via == nil {
		if kubeletGeneration(filepath.Join(filepath.Dir(f.abs), dataLink)) == "" {
			return f.readAt(f.abs, why, probe)
		}
		v := f.resolve(nil, nil, nil)
		via = &v
	}
	rel, ok := via.inPayload()
	if !ok {
		return f.readAt(f.abs, why, probe)
	}
	vol := filepath.Dir(via.DataLink)
	start := via.gen
	if first {
		// The last resolution may be a swap behind: the payload is the one
		// ..data names now.
		if start = kubeletGeneration(via.DataLink); !isPayload(start) {
			return f.readAt(f.abs, why, probe)
		}
	}
	return readGeneration(via.DataLink, start, func(gen string) reading {
		path := via.Files[0] // vol/gen/rel, the resolution's own
		if gen != via.gen {
			path = filepath.Join(vol, gen, rel)
		}
		r := f.readAt(path, why, probe)
		if r.err == nil {
			r.c.gen, r.c.vol = gen, vol
			if gen == via.gen {
				r.c.swapped = via.swapped
			}
		}
		return r
	})
}

// readAt reads the file at path: the path, or where it leads in a payload.
func (f *fileSubject) readAt(path string, why decide.Reason, probe bool) reading {
	c, err := readFile(path, f.path, f.maxSize, probe)
	if err != nil {
		return reading{why: why, err: err}
	}
	c.sig = signOf(0, "", c.info)
	return reading{why: why, c: c}
}

func (f *fileSubject) stat() decide.Signature {
	info, err := os.Stat(f.abs)
	if err != nil {
		return 0
	}
	return signOf(0, "", info)
}

func (f *fileSubject) stamp() decide.Stamp {
	info, err := os.Stat(f.abs)
	if err != nil {
		return 0
	}
	return osfile.StampOf(info)
}

func (f *fileSubject) paths() []string { return []string{f.abs} }

func (f *fileSubject) empty(c *content) bool { return len(c.data) == 0 }

// missing says why the file's path does not resolve now, or nil.
func (f *fileSubject) missing() error {
	c := chain.Resolve(f.abs, nil)
	return unresolved(f.path, c.Err)
}

// factsOf is what the decider is told of the reading r of subj: whether it
// failed and how, whether it found nothing, and the file's stat and times.
// A read from a kubelet volume that does not know when its payload was
// swapped in asks the volume's ..data link, but for one made first, which
// the decider accepts only on the kernel's word, never by the times.
func factsOf(subj subject, r *reading) decide.Read {
	d := decide.Read{Why: r.why, Err: r.err, Missing: errors.Is(r.err, fs.ErrNotExist), Process: osfile.ProcessError(r.err)}
	if r.err != nil {
		return d
	}
	d.Empty, d.Size, d.Torn = subj.empty(&r.c), int64(r.c.size()), r.c.torn
	d.Info, d.Sig, d.ModTime = r.c.info, r.c.sig, r.c.mtime
	d.Volume, d.Swapped, d.Writers = r.c.vol != "", r.c.swapped, r.c.writers
	d.Stamp, d.FineTimes = r.c.stamp, r.c.fine
	if d.Volume && d.Swapped.IsZero() && !r.first {
		if link, err := os.Lstat(filepath.Join(r.c.vol, dataLink)); err == nil {
			d.Swapped = link.ModTime()
		}
	}
	return d
}

// readGeneration reads from one payload of the kubelet volume whose ..data
// link is link: read is handed the payload's name, gen to begin with, the
// one a resolution found. A read that finds a file missing when ..data
// names another payload by then (kubelet removed the one read, once it had
// swapped in a newer one) is made again from the newer one, up to
// maxGenerationReads times in all; what it finds then stands.
func readGeneration(link, gen string, read func(gen string) reading) reading {
	r := read(gen)
	for range maxGenerationReads - 1 {
		if !errors.Is(r.err, fs.ErrNotExist) {
			break
		}
		now := kubeletGeneration(link)
		if now == gen || !isPayload(now) {
			break
		}
		gen = now
		r = read(gen)
	}
	return r
}
