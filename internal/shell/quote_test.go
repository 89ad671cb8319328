package shell

import (
	"os/exec"
	"testing"
)

// A quoted word reaches the command as it was, whatever it holds; a plain one is left
// as it is.
func TestQuote(t *testing.T) {
	for _, s := range []string{"plain/path-1.hcl", "", "two words", "it's", `a"b`, "$HOME", "`x`", "a\nb", "-var=k=v w"} {
		out, err := exec.Command("bash", "-c", "printf %s "+Quote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("Quote(%q) = %s: bash read %q, %v", s, Quote(s), out, err)
		}
	}
	if Quote("plain/path-1.hcl") != "plain/path-1.hcl" {
		t.Errorf("a plain word was quoted: %s", Quote("plain/path-1.hcl"))
	}
}
