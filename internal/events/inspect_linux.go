package events

// WithInotify calls fn with the descriptor of the hub's inotify instance,
// holding the hub meanwhile: no event is dispatched, and the backend's
// reader waits at its next batch, so the kernel's queue fills. It reports
// false, and does not call fn, where the hub has no inotify instance (no
// subscription, or another backend). It is for the tests, which count the
// kernel's watches of a hub and make its queue overflow.
func (h *Hub) WithInotify(fn func(fd int)) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur == nil {
		return false
	}
	b, ok := h.cur.b.(*inotifyBackend)
	if !ok {
		return false
	}
	rc, err := b.in.SyscallConn()
	if err != nil {
		return false
	}
	return rc.Control(func(f uintptr) { fn(int(f)) }) == nil
}
