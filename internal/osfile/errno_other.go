//go:build !windows

package osfile

import "syscall"

// platformErrnoClasses: Unix's errnos are all in errnoClasses.
var platformErrnoClasses = map[syscall.Errno]errClass{}
