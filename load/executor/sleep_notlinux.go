//go:build !linux

package executor

import "time"

// nanosleep falls back to the runtime's sleep where there is no nanosleep(2).
func nanosleep(d time.Duration) { time.Sleep(d) }
