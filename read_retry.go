package file

import (
	"errors"
	"syscall"
	"time"
)

// retry is a session's retry of a read that failed for a reason of the
// process, not of the file: too many open files, no memory, a signal. The
// file may be fine, and nothing about it will change to send an event, so
// the read is made again, after the watch's backoff, until it reads.
type retry struct {
	bo    backoff
	timer *time.Timer // nil when no retry is due
	why   Reason      // of the read that failed
	trust trust       // of the read that failed
	fresh bool        // of the read that failed
}

// later schedules the read again, after the next step of the backoff.
func (r *retry) later(why Reason, t trust, fresh bool) {
	r.stopTimer()
	r.why, r.trust, r.fresh = why, t, fresh
	r.timer = time.NewTimer(r.bo.next(0))
}

// done says that a read was made that needs no retry: the backoff starts
// again from its first step.
func (r *retry) done() {
	r.stopTimer()
	r.bo.step = 0
}

// C fires when the read is due again; then call fired.
func (r *retry) C() <-chan time.Time {
	if r.timer == nil {
		return nil
	}
	return r.timer.C
}

// fired returns the reason and trust of the read to make again.
func (r *retry) fired() (Reason, trust) {
	r.timer = nil
	return r.why, r.trust
}

// wasFresh reports whether the read to make again was fresh: see
// session.offer.
func (r *retry) wasFresh() bool { return r.fresh }

func (r *retry) stopTimer() {
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
}

// processError reports whether a read failed for a reason of the process
// or the machine (file descriptors or memory exhausted, interrupted), not
// of the file: retrying soon will likely read it.
func processError(err error) bool {
	if err == nil {
		return false
	}
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.ENOBUFS,
		syscall.EAGAIN, syscall.EINTR} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return platformProcessError(err)
}
