package plan

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestWriteDiagnosticsContext: a diagnostic names the block it is in, shows every line
// of a multi-line subject, and the values of the references involved.
func TestWriteDiagnosticsContext(t *testing.T) {
	src := `variable "tool" {
  type    = string
  default = null
}
backend "ollama" "local" {}
workload "w" {}
matrix "m" {
  model    = ["a"]
  tool     = [var.tool]
  workload = [workload.w]
}
expect "e" {
  condition = (result.error_rate
    + 1)
}
`
	_, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	f, _ := hclsyntax.ParseConfig([]byte(src), "p.hcl", hcl.InitialPos)
	var b bytes.Buffer
	WriteDiagnostics(&b, map[string]*hcl.File{"p.hcl": f}, diags, false)
	out := b.String()
	for _, want := range []string{
		"Error: Invalid tool\n  --> p.hcl:9:15, in matrix \"m\"\n",
		"  │ var.tool is null\n",
		"Error: Invalid condition\n  --> p.hcl:13:15, in expect \"e\"\n",
		"13 |   condition = (result.error_rate\n   |               ^^^^^^^^^^^^^^^^^^\n",
		"14 |     + 1)\n   |     ^^^^\n",
		"   │ result.error_rate is a number, known once measured\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
