//go:build !unix

package main

import (
	"os"
	"strconv"
)

// access is not checked off Unix: Windows grants access by ACLs, which
// the library's reads report as they find them.
func (r *report) access(...string) {}

// describe tells nothing of a path off Unix.
func describe(string, string) string { return "" }

// whoAmI names the doctor's user.
func whoAmI() string { return "uid " + strconv.Itoa(os.Getuid()) }

// fileOwner names the owner of f, where the platform says: here it does
// not.
func fileOwner(*os.File) string { return "" }

// links cannot tell a file's links off Unix; no mount table to judge by
// is read here either.
func links(string) (uint64, bool) { return 0, false }
