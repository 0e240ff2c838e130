//go:build tools

package main

// apidiff, built by the check from this module's requirements.
import _ "golang.org/x/exp/cmd/apidiff"
