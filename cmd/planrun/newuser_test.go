package main

import (
	"strings"
	"testing"
)

// What a new user types wrong, and what planrun answers.
func TestNewUserHints(t *testing.T) {
	for _, c := range []struct {
		args       []string
		code       int
		stream     string // "out" or "err"
		wantSubstr string
	}{
		{[]string{"--version"}, exitOK, "out", "planrun v"},
		{[]string{"-version"}, exitOK, "out", "planrun v"},
		{[]string{"aply"}, exitUsage, "err", `unknown command "aply". Did you mean "apply"?`},
		{[]string{"plan", "-jsn", "x.hcl"}, exitUsage, "err", "unknown flag -jsn. Did you mean -json?"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errs := runCmd(t, "", c.args...)
			got := out
			if c.stream == "err" {
				got = errs
			}
			if code != c.code || !strings.Contains(got, c.wantSubstr) {
				t.Fatalf("exit %d (want %d); std%s lacks %q:\n%s", code, c.code, c.stream, c.wantSubstr, got)
			}
		})
	}
}
