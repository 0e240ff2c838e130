package osfile

import (
	"io"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"
)

// openToRead opens a file for reading as a bare descriptor, without
// blocking on a named pipe with no writer (O_NONBLOCK) and without making
// a terminal device the controlling terminal (O_NOCTTY). An os.File would
// cost a system call more on the path to the callback, and its allocations:
// it offers every descriptor opened non-blocking to the runtime's poller
// (epoll_ctl, which a regular file is refused), and sets up the poller's
// bookkeeping and a cleanup for it. A read needs none of that: it checks
// that the file is regular before it reads, and closes what it opened.
func openToRead(path string) (readable, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return &rawFile{fd: fd, path: path}, nil
	}
}

// rawFile is a descriptor opened by openToRead. It holds the results of
// its first two fstats, so that a read's two (as it opens the file, and
// once it has read it) cost no allocation: the first is kept as the read's
// Info; later ones reuse the second, which no caller keeps (see Stat).
type rawFile struct {
	fd    int
	path  string
	stats int      // fstats made so far
	first statInfo // the first fstat's result, the read's Info
	later statInfo // the last of the others
	// mount is the unique ID of the mount the file was opened through,
	// which the first stat learns (statxFd); 0 if the kernel did not say.
	// The filesystem's kind is kept by it (fsinfo.Magic).
	mount uint64
}

func (f *rawFile) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(f.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, &fs.PathError{Op: "read", Path: f.path, Err: err}
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Stat fstats the descriptor. The first result is the file's own; each
// later one overwrites the one before, and is only good until the next
// call: ReadFile keeps the first as the read's Info, and only compares the
// second with it. The first is a statx, which also names the mount.
func (f *rawFile) Stat() (fs.FileInfo, error) {
	info := &f.later
	if f.stats == 0 {
		info = &f.first
	}
	f.stats++
	info.name = filepath.Base(f.path)
	if info == &f.first {
		mount, ok, err := statxFd(f.fd, &info.st)
		if err != nil {
			return nil, &fs.PathError{Op: "stat", Path: f.path, Err: err}
		}
		if ok {
			f.mount = mount
			return info, nil
		}
	}
	for {
		err := syscall.Fstat(f.fd, &info.st)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "stat", Path: f.path, Err: err}
		}
		return info, nil
	}
}

// Close closes the descriptor. Linux releases it even when close fails, so
// it is never retried.
func (f *rawFile) Close() error { return syscall.Close(f.fd) }

// statInfo is an fstat's result as an fs.FileInfo, as os.Stat gives it:
// the file's base name, and the *syscall.Stat_t as its Sys.
type statInfo struct {
	name string
	st   syscall.Stat_t
}

func (i *statInfo) Name() string       { return i.name }
func (i *statInfo) Size() int64        { return i.st.Size }
func (i *statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i *statInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i *statInfo) Sys() any           { return &i.st }

func (i *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if i.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if i.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if i.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// changeTime is the file's change time (ctime), in nanoseconds, as a stat
// on Linux gives it; zero if it has none.
func changeTime(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
