package decide

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A supervisor's decisions, scenario by scenario: each loop's end (and how
// long it ran) or start, and what the supervisor decides of it, summed up.
// The backoff runs from 20 ms to 3 s; its jitter keeps each delay within
// the upper half of its step.
func TestSupervision(t *testing.T) {
	type step struct {
		end   LoopEnd
		ran   time.Duration
		start *LoopStart
		want  string
	}
	ended := func(e LoopEnd, ran time.Duration, want string) step { return step{end: e, ran: ran, want: want} }
	started := func(l LoopStart, want string) step { return step{start: &l, want: want} }
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"a loop that fails is retried after the backoff, which grows; the loop that starts then re-arms the watch", []step{
			started(LoopStart{}, "told started"),
			ended(EndFailed, time.Millisecond, "retry after 10ms–20ms; told; restart"),
			ended(EndFailed, time.Millisecond, "retry after 20ms–40ms; told; restart"),
			ended(EndFailed, time.Millisecond, "retry after 40ms–80ms; told; restart"),
			started(LoopStart{}, "told re-armed after 3"),
			started(LoopStart{}, "told started"),
		}},
		{"a loop that ran its cap was healthy: its failure is a new one, retried from the backoff's least", []step{
			ended(EndFailed, time.Millisecond, "retry after 10ms–20ms; told; restart"),
			ended(EndFailed, time.Millisecond, "retry after 20ms–40ms; told; restart"),
			ended(EndFailed, 3*time.Second, "retry after 10ms–20ms; told; restart"),
		}},
		{"events that cannot be had: a poll loop stands in, with no backoff; trying events again, still unavailable, is no restart", []step{
			ended(EndEventsUnavailable, time.Millisecond, "run poll; told; restart"),
			started(LoopStart{Polls: true, Fallback: true}, "told nothing"),
			ended(EndTryEvents, EventRetryInterval, "run events"),
			ended(EndEventsUnavailable, time.Millisecond, "run poll; told"),
			started(LoopStart{Polls: true, Fallback: true}, "told nothing"),
			ended(EndTryEvents, EventRetryInterval, "run events"),
			started(LoopStart{}, "told re-armed after 2"),
		}},
		{"a file on a filesystem without remote events: its loop polls besides, told once per filesystem", []step{
			started(LoopStart{Remote: "nfs"}, "told started; polls remote; tell remote"),
			ended(EndFailed, time.Millisecond, "retry after 10ms–20ms; told; restart"),
			started(LoopStart{Remote: "nfs"}, "told re-armed after 1; polls remote"),
			started(LoopStart{Remote: "fuse"}, "told started; polls remote; tell remote"),
		}},
		{"polling as WithPolling asked is told as such", []step{
			started(LoopStart{Polls: true}, "told polling"),
		}},
		{"a loop stopped: the watch is over", []step{
			ended(EndStopped, time.Hour, "run nothing"),
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := NewSupervisor(20*time.Millisecond, 3*time.Second, 1)
			for i, st := range c.steps {
				var got string
				switch {
				case st.start != nil:
					got = startSummary(s.Started(*st.start))
				default:
					got = supervisionSummary(s.Ended(st.end, st.ran), st.want)
				}
				assert.Equal(t, st.want, got, "step %d", i)
			}
		})
	}
}

// supervisionSummary sums a supervision up; a retry's delay is given as
// the range want names, if it falls in it, so that the jitter does not
// matter.
func supervisionSummary(sv Supervision, want string) string {
	parts := []string{"run " + sv.Run.String()}
	if sv.Run == RunRetry {
		parts[0] = fmt.Sprintf("retry after %v", sv.After)
		first, _, _ := strings.Cut(strings.TrimPrefix(want, "retry after "), ";")
		if los, his, ok := strings.Cut(first, "–"); ok {
			lo, _ := time.ParseDuration(los)
			hi, _ := time.ParseDuration(his)
			if sv.After >= lo && sv.After <= hi {
				parts[0] = "retry after " + first
			}
		}
	}
	if sv.Told {
		parts = append(parts, "told")
	}
	if sv.Restart {
		parts = append(parts, "restart")
	}
	return strings.Join(parts, "; ")
}

func startSummary(st Start) string {
	tells := [...]string{"told started", "told re-armed", "told polling", "told nothing"}
	parts := []string{tells[st.Tell]}
	if st.Tell == TellRearmed {
		parts[0] += fmt.Sprintf(" after %d", st.Rearmed)
	}
	if st.PollRemote {
		parts = append(parts, "polls remote")
	}
	if st.TellRemote {
		parts = append(parts, "tell remote")
	}
	return strings.Join(parts, "; ")
}
