//go:build !unix

package index

import "time"

// cpuTime is 0 where there is no getrusage: the benchmark's query-cpu-s reads 0 there.
func cpuTime() time.Duration { return 0 }
