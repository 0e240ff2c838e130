package file

import "github.com/keepwatch/file/internal/decide"

// The decider takes a change of attributes that leaves the file's stat as
// the last read left it for nothing (a chmod, a touch). One of them means
// something to the provider: the link count of a single file mounted on
// its own drops to 0 when the host replaces its source, and the file's own
// watch hears it at once (mount.go). The loop passes such events on to its
// sink, once per turn, after it has carried out what they asked.

// noteAttributes notes a change of attributes among evs.
func (l *watchLoop) noteAttributes(evs []decide.Event) {
	for _, ev := range evs {
		if ev.Has(decide.OpAttrib) {
			l.attribSeen = true
			return
		}
	}
}

// tellAttributes tells the sink of the changes of attributes noted since
// it last did, if any.
func (l *watchLoop) tellAttributes() {
	if l.attribSeen {
		l.attribSeen = false
		l.out.attributes()
	}
}
