//go:build !linux

package events

// NewBell returns nil here: loops wait on their channels.
func NewBell() *Bell { return nil }

func (b *Bell) ring() {}

func (b *Bell) wait() {}
