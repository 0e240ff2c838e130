package file

import "time"

// retry is a session's retry of a read that failed for a reason of the
// process, not of the file: too many open files, no memory, a signal. The
// file may be fine, and nothing about it will change to send an event, so
// the read is made again, after the watch's backoff, until it reads.
type retry struct {
	bo    backoff
	at    time.Time // when the read is due again; zero if no retry is due
	order readOrder // the read that failed
}

// later schedules the read o again, after the next step of the backoff.
func (r *retry) later(o readOrder, now time.Time) {
	r.order, r.at = o, now.Add(r.bo.next(0))
}

// done says that a read was made that needs no retry: the backoff starts
// again from its first step.
func (r *retry) done() {
	r.at = time.Time{}
	r.bo.step = 0
}

// fired returns the read to make again, now that it is due.
func (r *retry) fired() readOrder {
	r.at = time.Time{}
	return r.order
}
