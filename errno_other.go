//go:build !windows

package file

import "syscall"

// platformErrnoClasses: Unix's errnos are all in errnoClasses.
var platformErrnoClasses = map[syscall.Errno]errClass{}
