package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestOpenHeredoc: a heredoc without its closing marker is one error at the <<MARKER
// that opened it, naming the marker, and nothing after it is a second error. (The
// invalid-files format cannot mark it: a comment after <<MARKER is itself a mistake.)
func TestOpenHeredoc(t *testing.T) {
	head := "backend \"openai\" \"v\" {\n  url = \"http://127.0.0.1:8000/v1\"\n}\n"
	tail := "matrix \"m\" {\n  model    = [\"m\"]\n  tool     = [backend.openai.v]\n  workload = [workload.w]\n}\n"
	for _, tc := range []struct {
		name, src, marker string
		line              int
	}{
		{"misspelt marker", head + "workload \"w\" {\n  prompt = <<-PROMPT\n    Summarise this.\n  PROMT\n}\n" + tail, "PROMPT", 5},
		{"never closed", head + "workload \"w\" {\n  prompt = <<EOT\nTell me a story.\n}\n" + tail, "EOT", 5},
		{"closed inline", head + "workload \"w\" {\n  prompt = <<EOT\nTell me a story. EOT\n}\n" + tail, "EOT", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.hcl")
			if err := os.WriteFile(path, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, diags := Load(path, LoadOptions{Getenv: noEnv})
			errs := diags.Errs()
			if len(errs) != 1 {
				t.Fatalf("%d errors, want 1:\n%s", len(errs), renderDiags(nil, diags))
			}
			d := errs[0].(*hcl.Diagnostic)
			if d.Summary != "Unterminated template string" || d.Subject == nil || d.Subject.Start.Line != tc.line ||
				!strings.Contains(d.Detail, "a line holding only "+tc.marker+" ") {
				t.Fatalf("got %s at %v: %s", d.Summary, d.Subject, d.Detail)
			}
		})
	}
}
