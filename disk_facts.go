package file

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// diskFacts answers from the disk and the session's watch set, each
// question once until reset.
type diskFacts struct {
	subj    subject
	ws      *watchSet
	stats   map[string]fs.FileInfo // by path; a nil value: asked, none there
	lstats  map[string]fs.FileInfo
	sig     signature
	sigTook bool
}

func newDiskFacts(subj subject, ws *watchSet) *diskFacts {
	return &diskFacts{subj: subj, ws: ws, stats: make(map[string]fs.FileInfo, 2), lstats: make(map[string]fs.FileInfo, 2)}
}

// reset forgets every answer: what follows is another batch.
func (d *diskFacts) reset() {
	clear(d.stats)
	clear(d.lstats)
	d.sigTook = false
}

func (d *diskFacts) stat(path string) fs.FileInfo {
	if info, ok := d.stats[path]; ok {
		return info
	}
	info, err := os.Stat(path)
	if err != nil {
		info = nil
	}
	d.stats[path] = info
	return info
}

func (d *diskFacts) lstat(path string) fs.FileInfo {
	if info, ok := d.lstats[path]; ok {
		return info
	}
	info, err := os.Lstat(path)
	if err != nil {
		info = nil
	}
	d.lstats[path] = info
	return info
}

func (d *diskFacts) subject() signature {
	if d.sigTook {
		return d.sig
	}
	d.sig, d.sigTook = 0, true
	if f, ok := d.subj.(*fileSubject); ok {
		// One file: its stat is the one stat asks for too.
		if info := d.stat(f.abs); info != nil {
			d.sig = signOf(0, "", info)
		}
	} else {
		d.sig = d.subj.stat()
	}
	return d.sig
}

func (d *diskFacts) swapped(vol string) (time.Time, bool) {
	link := d.lstat(filepath.Join(vol, dataLink))
	if link == nil {
		return time.Time{}, false
	}
	return link.ModTime(), true
}

func (d *diskFacts) watched(path string) bool { return d.ws.watched[path] }
func (d *diskFacts) refused(path string) bool { return d.ws.refused[path] != nil }

func (d *diskFacts) ownWatch(path string, info fs.FileInfo) int {
	if of := d.ws.fileOf[path]; of != nil && sameFile(of, info) {
		return d.ws.ids[path]
	}
	return 0
}
