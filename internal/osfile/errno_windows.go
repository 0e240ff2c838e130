package osfile

import "syscall"

// platformErrnoClasses are Windows's codes for a read that failed for a
// reason of the process, or of another process holding the file: handles
// or memory exhausted, or a writer that opened the file without sharing
// it, which lets go when it is done.
var platformErrnoClasses = map[syscall.Errno]errClass{
	4:  errProcess, // ERROR_TOO_MANY_OPEN_FILES
	8:  errProcess, // ERROR_NOT_ENOUGH_MEMORY
	14: errProcess, // ERROR_OUTOFMEMORY
	32: errProcess, // ERROR_SHARING_VIOLATION
	33: errProcess, // ERROR_LOCK_VIOLATION
}
