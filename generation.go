package file

import (
	"path/filepath"
	"strings"

	"github.com/keepwatch/file/internal/chain"
)

// A kubelet volume (a ConfigMap's, a Secret's, a projected one) holds its
// payload in a directory of its own, ..<timestamp>, and a link ..data to
// it, which kubelet renames a link to a new payload over at once; each key
// is a link key -> ..data/key. A read that went through ..data once per
// file could mix two payloads, and one that read through it and named the
// generation from a readlink before or after could name the wrong one. So
// every read of a File or a FileSet in a kubelet volume resolves ..data
// once, reads every file from the payload directory it named, and names
// that payload as its generation: one generation, whole, always.

// dataLink is the link by which kubelet swaps a volume's payload at once.
const dataLink = "..data"

// maxGenerationReads bounds the reads of a volume whose payloads are
// removed under them, one after another. Kubelet swaps once a minute at
// most, so a read is made again once at most there; a writer that swaps
// back to back (a test's) let ten reads in a row be overtaken on a loaded
// 2-core machine, so the bound is far above that: it only keeps a read
// from following such a writer for ever.
const maxGenerationReads = 100

// kubeletGeneration names the payload a kubelet volume holds now: the
// target of its ..data link, "" if there is none.
func kubeletGeneration(link string) string {
	gen, err := chain.Readlink(link) // no buffer to allocate: it is on the way to every callback
	if err != nil {
		return ""
	}
	return gen
}

// isPayload reports whether gen, a ..data link's target, names a payload
// directory beside the link, as kubelet's always do: anything else is not
// a kubelet volume's, and is read as any link is.
func isPayload(gen string) bool {
	return gen != "" && !filepath.IsAbs(gen) && !strings.ContainsRune(gen, filepath.Separator) && gen != "." && gen != ".."
}
