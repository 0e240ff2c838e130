package file

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// traceOut, when given, receives the decisions of every watch session run
// in a synctest bubble (virtual time, so the same every run), one per line:
// the test's temporary directory, the bubble's time, and the decision. It
// is how two builds are compared on the same scenarios:
//
//	go test -run 'Test|Fuzz' . -args -trace.out=/tmp/a.trace
//
// then split by test and compared (see docs/internals.md).
var traceOut = flag.String("trace.out", "", "write the watch sessions' decisions in synctest bubbles to this file")

// tempDirPattern matches a test's temporary directory, which names the test.
var tempDirPattern = regexp.MustCompile(`/tmp/([^/]*?)[0-9]+(?:/[0-9]{3})?`)

// tempDirRoot matches a test's temporary directory in a trace line.
var tempDirRoot = regexp.MustCompile(`/tmp/[^/]+(?:/[0-9]{3})?`)

// payloadPattern matches a kubelet payload directory's name, which is
// random.
var payloadPattern = regexp.MustCompile(`\.\.[0-9_]+\.[0-9]+`)

// startTrace sets traceHook to write to *traceOut, and returns what closes it.
func startTrace() func() {
	if *traceOut == "" {
		return func() {}
	}
	out, err := os.Create(*traceOut)
	if err != nil {
		panic(err)
	}
	var mu sync.Mutex
	jitter = func(n int64) int64 { return n / 2 } // the same backoffs every run
	traceHook = func(path, line string) {
		now := time.Now()
		if now.Year() != 2000 {
			return // real time: not the same two runs in a row
		}
		m := tempDirPattern.FindStringSubmatch(path)
		if m == nil {
			return
		}
		key := m[1]
		if base := filepath.Base(path); strings.HasPrefix(base, "fuzz-") {
			key += "/" + base // a seed of FuzzSessionEvents
		}
		line = tempDirRoot.ReplaceAllString(line, "$$T")
		line = payloadPattern.ReplaceAllString(line, "..$$PAYLOAD")
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, "%s\t%s\t%s\n", key, now.Sub(epoch), line)
	}
	return func() {
		traceHook = nil
		_ = out.Close()
	}
}
