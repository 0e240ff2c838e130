package filemount

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestJudge(t *testing.T) {
	const root = "/home/me/app/config.yaml"
	for _, c := range []struct {
		name string
		f    Facts
		want State
	}{
		{"a plain file", Facts{Resolves: true, Links: 1}, Unmounted},
		{"a plain file the table cannot tell of", Facts{Resolves: true, Links: 0}, Unmounted},
		{"a single file mounted, its source in place", Facts{Mounted: true, Root: root, Resolves: true, Links: 1}, Intact},
		{"a source with a second name", Facts{Mounted: true, Root: root, Resolves: true, Links: 2}, Intact},
		{"its source renamed over on the host side", Facts{Mounted: true, Root: root + "//deleted", Resolves: true, Links: 0}, Replaced},
		{"no link left, the table not yet saying so", Facts{Mounted: true, Root: root, Resolves: true, Links: 0}, Replaced},
		{"its name unlinked, a second name left", Facts{Mounted: true, Root: root + "//deleted", Resolves: true, Links: 1}, Replaced},
		{"the path leads nowhere now", Facts{Mounted: true, Root: root}, Intact},
		{"a source whose name ends so", Facts{Mounted: true, Root: "/srv/deleted", Resolves: true, Links: 1}, Intact},
		{"its source as first found", Facts{Mounted: true, Root: root, Resolves: true, Links: 1, Source: root}, Intact},
		{"its source renamed away (mv, an editor's backup copy)", Facts{Mounted: true, Root: root + "~", Resolves: true, Links: 1, Source: root}, Replaced},
		{"a directory above its source renamed", Facts{Mounted: true, Root: "/home/me/app.old/config.yaml", Resolves: true, Links: 1, Source: root}, Replaced},
		{"renamed away, then unlinked", Facts{Mounted: true, Root: root + "~//deleted", Resolves: true, Links: 0, Source: root}, Replaced},
		{"renamed away, then renamed back", Facts{Mounted: true, Root: root, Resolves: true, Links: 1, Source: root}, Intact},
	} {
		assert.Equal(t, c.want, Judge(c.f), c.name)
	}
}

func TestSource(t *testing.T) {
	assert.Equal(t, "/home/me/app/config.yaml", Source("/home/me/app/config.yaml//deleted"))
	assert.Equal(t, "/home/me/app/config.yaml", Source("/home/me/app/config.yaml"))
}

func TestNext(t *testing.T) {
	for _, c := range []struct {
		was, now State
		fresh    bool
		want     Change
	}{
		{Unmounted, Unmounted, false, Nothing},
		{Unmounted, Intact, true, Nothing},
		{Intact, Intact, false, Nothing},
		{Intact, Replaced, false, Tell},
		{Unmounted, Replaced, true, Tell}, // a watch that starts on a source replaced before it
		{Replaced, Replaced, false, Nothing},
		{Replaced, Replaced, true, Tell},   // told to the next watch too
		{Replaced, Intact, false, Over},    // the mount made again
		{Replaced, Intact, true, Over},     // between two watches
		{Replaced, Unmounted, false, Over}, // the mount gone: the path leads to a file of its own
	} {
		assert.Equal(t, c.want, Next(c.was, c.now, c.fresh), "%s to %s, fresh %v", c.was, c.now, c.fresh)
	}
}
