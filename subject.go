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
)

// subject is what a watch session reads and watches: one file
// (fileSubject) or a set of files read as one (setSubject).
type subject interface {
	// resolve looks up, now, everything the subject's content depends on,
	// calling before with each path before it looks it up. Given prev, an
	// earlier resolution, and changed, which reports the paths that
	// changed since, it may look up only what follows the first of them.
	resolve(before func(path string), prev *sight, changed func(path string) bool) sight
	// read reads the subject. via, if not nil, is the resolution made just
	// before: the read takes from it what it already found.
	read(why Reason, via *sight) reading
	// stat sums up the stat of everything read, for the cheap re-check: a
	// change of content that leaves it alike is not looked for.
	stat() signature
	// doubtful reports whether a read is more likely the middle of an
	// update than its end: a missing or empty file, an empty set.
	doubtful(r reading) bool
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

// sight is what a resolution of a subject found it depends on: the paths
// whose events matter, and what to watch.
type sight struct {
	names    map[string]bool // every path looked up: an event naming one matters
	entries  string          // a directory any of whose entries matching match matters; "" if none
	match    func(name string) bool
	dirs     []string    // the directories the resolution depends on: always watched
	searched []string    // every directory a name was looked up in, dirs among them
	files    []string    // the files read, whose own inode is watched where it can be
	home     string      // where the subject lives: its filesystem's events matter
	swap     string      // the ..data link of a kubelet volume the subject is read through; "" if none
	gen      string      // what swap pointed to: the payload the subject is read from
	swapped  time.Time   // when swap was made: when that payload was swapped in
	atomic   bool        // whole updates arrive at once (one file, or a kubelet swap): no need to wait for a set to settle
	one      bool        // the resolution of one file: chain is its
	chain    chain.Chain // the resolution it came from, to be resumed; none for a set
	file     fs.FileInfo // the file it led to, for one file: what a read right after it should find
}

// relevant reports whether an event on name can change what the subject
// resolves to or what it holds.
func (v *sight) relevant(name string) bool {
	return v.names[name] || slices.Contains(v.dirs, name) || slices.Contains(v.files, name) ||
		(v.entries != "" && filepath.Dir(name) == v.entries && v.match(filepath.Base(name)))
}

// fileOf is where the file r read is, if the resolution v is the one the
// read went by and led to it: the file's real path. "" if not known.
func (v *sight) fileOf(r *reading) string {
	if len(v.files) != 1 || v.file == nil || r.c.info == nil || !sameFile(r.c.info, v.file) {
		return ""
	}
	return v.files[0]
}

// onTheWay reports whether path is a name the resolution looked up on the
// way to the file, not the file itself.
func (v *sight) onTheWay(path string) bool {
	return v.names[path] && !slices.Contains(v.files, path)
}

// same reports whether two resolutions lead the same way through the same
// names: for one file, its chain's; for a set, the names and directories
// of all its files'.
func (v *sight) same(o *sight) bool {
	if v.one && o.one {
		return v.chain.Same(&o.chain)
	}
	return maps.Equal(v.names, o.names) && v.entries == o.entries && slices.Equal(v.dirs, o.dirs) &&
		slices.Equal(v.searched, o.searched) && slices.Equal(v.files, o.files)
}

// inPayload returns where the one file the resolution found is in the
// payload its ..data named: a key's path below the payload's directory. It
// reports false outside a kubelet volume, and for a file the resolution
// found elsewhere (a key that links out of its payload).
func (v *sight) inPayload() (string, bool) {
	if v.swap == "" || len(v.files) != 1 || !isPayload(v.gen) {
		return "", false
	}
	// files[0] is vol/gen/rel, all of it symlink-free and clean: cut, not
	// joined, on the way to the callback.
	const sep = string(filepath.Separator)
	dir := filepath.Dir(v.swap)
	rest, ok := strings.CutPrefix(v.files[0], dir)
	if ok && !strings.HasSuffix(dir, sep) { // a root ends in one already
		rest, ok = strings.CutPrefix(rest, sep)
	}
	if ok {
		rest, ok = strings.CutPrefix(rest, v.gen)
	}
	if ok {
		rest, ok = strings.CutPrefix(rest, sep)
	}
	return rest, ok && rest != ""
}

// want lists what the notifier is asked for: every name, and the entries
// of the entries directory, as the path with a trailing separator.
func (v *sight) want() map[string]bool {
	if v.entries == "" {
		return v.names
	}
	w := maps.Clone(v.names)
	w[v.entries+string(filepath.Separator)] = true
	return w
}

// signature sums up stats: alike stats, alike signatures.
type signature uint64

// signOf adds one stat to a signature: the file's identity, size and
// modification time, and the name it was read under.
func signOf(sig signature, name string, info fs.FileInfo) signature {
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
	dev, ino := fileID(info)
	put(dev)
	put(ino)
	put(uint64(info.Size()))
	put(uint64(info.ModTime().UnixNano()))
	return signature(h.Sum64() | 1) // never zero: zero means no stat
}

// fileSubject is one file.
type fileSubject struct {
	path    string // as given, cleaned: names the file in errors
	abs     string // absolute, not cleaned: resolved as the kernel does
	maxSize int64
}

func (f *fileSubject) resolve(before func(string), prev *sight, changed func(string) bool) sight {
	var c chain.Chain
	if prev != nil && prev.one && changed != nil {
		c = chain.ResumeReusing(f.abs, &prev.chain, changed, before)
	} else {
		c = chain.Resolve(f.abs, before)
	}
	v := sight{names: c.Names, dirs: c.Dirs, searched: c.Searched, home: c.Home(), atomic: true, one: true, chain: c, file: c.RealInfo}
	switch {
	case prev != nil && len(prev.files) == 1 && prev.files[0] == c.Real:
		v.files = prev.files // the same file's name: no slice to make on every write
	case c.Real != "" && prev != nil && changed != nil && cap(prev.files) > 0:
		// A resumed resolution takes over the last one's storage (see
		// chain.ResumeReusing): its slice of one name too.
		v.files = append(prev.files[:0], c.Real)
	case c.Real != "":
		v.files = []string{c.Real}
	}
	for _, h := range c.Hops {
		if filepath.Base(h.Link) == dataLink {
			v.swap, v.gen, v.swapped = h.Link, h.Target, h.ModTime
			break
		}
	}
	return v
}

// read reads the file. In a kubelet volume it reads it from the payload
// the resolution via found ..data to name (see generation.go), and names
// that payload as its generation; elsewhere it reads the path. Without a
// resolution, a file whose directory holds no ..data is read at once (the
// common case: ReadBytes on a plain file costs what os.ReadFile does), and
// one beside a ..data link is resolved first.
func (f *fileSubject) read(why Reason, via *sight) reading {
	if via == nil {
		if kubeletGeneration(filepath.Join(filepath.Dir(f.abs), dataLink)) == "" {
			return f.readAt(f.abs, why)
		}
		v := f.resolve(nil, nil, nil)
		via = &v
	}
	rel, ok := via.inPayload()
	if !ok {
		return f.readAt(f.abs, why)
	}
	vol := filepath.Dir(via.swap)
	return readGeneration(via.swap, via.gen, func(gen string) reading {
		path := via.files[0] // vol/gen/rel, the resolution's own
		if gen != via.gen {
			path = filepath.Join(vol, gen, rel)
		}
		r := f.readAt(path, why)
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
func (f *fileSubject) readAt(path string, why Reason) reading {
	c, err := readFile(path, f.path, f.maxSize)
	if err != nil {
		return reading{why: why, err: err}
	}
	c.sig = signOf(0, "", c.info)
	return reading{why: why, c: c}
}

func (f *fileSubject) stat() signature {
	info, err := os.Stat(f.abs)
	if err != nil {
		return 0
	}
	return signOf(0, "", info)
}

func (f *fileSubject) paths() []string { return []string{f.abs} }

func (f *fileSubject) doubtful(r reading) bool {
	return errors.Is(r.err, fs.ErrNotExist) || (r.err == nil && len(r.c.data) == 0)
}
