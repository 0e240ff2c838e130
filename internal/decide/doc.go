// Package decide makes every decision of a file watch: what each
// filesystem event means, when to resolve the path and read the file,
// whether what was read is whole and goes to the callback, what to watch,
// and when to look again.
//
// It does no I/O and reads no clock. The watch loop (the caller) pushes in
// what happened, each through one input method of [Decider] (an event, a
// resolution of the path, a read, the result of adding a watch, the time),
// with the facts it gathered for it, and gets back one [Decision]: the
// effects to carry out (watches to forget or remove, a read to deliver) and
// at most one [Action] whose outcome is the next input (resolve, read,
// take the events queued at a read, add a watch). The loop carries out
// each decision in full before it takes the next event. So every decision
// is a function of the inputs alone, and each transition is a table test.
//
// The compiler keeps it so: the package imports no package that does I/O
// (no os, no fmt, no path/filepath), and knows nothing of the loop.
//
// A file is delivered whole: a read is accepted only once the writers the
// events told of are done (their close, where the kernel reports it; a
// quiet window elsewhere), no later writer began before it was made, and a
// missing or empty file has lasted a window (it is far more often the
// middle of an update than its end). The wait before a read is readWait;
// what the file's writers are known to do, awaitedWriter; what the file's
// last reads found, lastRead; what is still to be done, pending; what is
// watched, watchSet.
package decide
