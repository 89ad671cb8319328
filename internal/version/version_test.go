package version

import (
	"strings"
	"testing"
)

// Without Go's VCS stamp (test binaries, go run, GOFLAGS=-buildvcs=false) the commit
// set with -ldflags is what the version carries.
func TestStringFallsBackToCommit(t *testing.T) {
	defer func(c string) { Commit = c }(Commit)
	Commit = "0123456789abcdef0123456789abcdef01234567"
	if got := String(); !strings.HasSuffix(got, "+0123456789ab") {
		t.Fatalf("String() = %q, want the commit's first 12 characters after +", got)
	}
}
