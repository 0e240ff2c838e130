// Package osfile is keepwatch's side of the operating system for one
// file: the read that opens without blocking (a named pipe cannot hang it,
// a device cannot feed it forever) and stops at its size limit, with the
// file's stamps before and after; what the kernel says of the file's
// writers (through internal/writers); whether two stats are of one file,
// its identity, link count and change time; the one table of what an
// errno says; and the wait for a truncation under way. Each platform's
// variant is in a file of its own (_linux, _unix, _windows, _other).
//
// It decides nothing: the watch loop in the root package asks it, and
// hands what it finds to internal/decide, whose types (Writers, Stamp) it
// reports in. It must not import the root package, nor internal/events:
// the event source and the file's reads are apart, and the loop joins
// them.
package osfile
