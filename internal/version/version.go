// Package version holds planrun's version, recorded in every result row.
package version

import "runtime/debug"

// Version is set at release time with -ldflags "-X github.com/planrun/planrun/internal/version.Version=v1.2.3".
var Version = "v0.1.0-dev"

// Commit is the VCS revision, set by the Makefile and scripts with -ldflags "-X
// github.com/planrun/planrun/internal/version.Commit=$(git rev-parse HEAD)": Go's own
// stamp is missing under GOFLAGS=-buildvcs=false (common in CI) and with go run.
var Commit = ""

// String is the version plus the VCS revision when the binary was built from a checkout
// (Go's stamp, else Commit).
func String() string {
	v := Version
	if info, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
		if rev == "" {
			rev = Commit
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			v += "+" + rev + dirty
		}
	}
	return v
}
