package live

import "github.com/keepwatch/file/livestats"

// Stats is a snapshot of what a live config has done, from [Config.Stats]
// or [Value.Stats]. It is [livestats.Stats], a package without koanf, so
// that metrics take live configs without bringing koanf into a program's
// module graph (keepwatchprom does).
type Stats = livestats.Stats

// Reporter is a live config as readiness checks and metrics see it:
// [*Config] and [*Value] are Reporters. It is [livestats.Reporter].
type Reporter = livestats.Reporter
