//go:build !linux

package osfile

import "io/fs"

// changeTime is zero here: only Linux's change times are fine enough to
// tell every change (see fsinfo.FineTimes), and nothing else asks for one.
func changeTime(fs.FileInfo) int64 { return 0 }
