package livestats_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/keepwatch/file/livestats"
)

// What a readiness check or a metrics collector reads of a live config,
// through a Reporter: *live.Config and *live.Value are Reporters. Stats
// marshal to JSON with the last error as its text (expvar, a status page).
func ExampleReporter() {
	var cfg livestats.Reporter = published{} // in a program: a *live.Config
	st := cfg.Stats()
	fmt.Println(st.Name, st.LastSucceeded, st.Comparable)
	js, _ := json.Marshal(st)
	fmt.Println(string(js))
	// Output:
	// app false false
	// {"Name":"app","Published":1,"Rejected":1,"LastSucceeded":false,"LastPublished":"2026-11-27T07:22:13Z","LastErrorTime":"2026-11-27T07:25:00Z","Identity":"","Comparable":false,"LastError":"keepwatch: config app rejected: port must be 1..65535"}
}

// published is a live config with one config in force and a push
// rejected since, without an identity.
type published struct{}

func (published) Stats() livestats.Stats {
	return livestats.Stats{
		Name:          "app",
		Published:     1,
		Rejected:      1,
		LastPublished: time.Date(2026, 11, 27, 7, 22, 13, 0, time.UTC),
		LastError:     errors.New("keepwatch: config app rejected: port must be 1..65535"),
		LastErrorTime: time.Date(2026, 11, 27, 7, 25, 0, 0, time.UTC),
	}
}
