//go:build unix

package file

import "syscall"

// openFlags keep an open from blocking on a named pipe with no writer and
// from making a terminal device the controlling terminal.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
