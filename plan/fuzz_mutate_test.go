package plan

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// mutationSources are the plans FuzzLoadMutated mutates: the examples and the test
// plans, valid and invalid, in a fixed order so a seed names the same plan every run.
func mutationSources(tb testing.TB) [][]byte {
	var names []string
	for _, dir := range []string{"../examples", "testdata/valid-files", "testdata/invalid-files"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.hcl"))
		names = append(names, files...)
	}
	sort.Strings(names)
	var srcs [][]byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			tb.Fatal(err)
		}
		srcs = append(srcs, b)
	}
	return srcs
}

// brokenVars are declared in every mutated plan so that a mutation can put a value
// made unknown by an earlier error where a value is expected.
const brokenVars = `
variable "fuzz_bad_number" {
  type    = number
  default = "x"
}
variable "fuzz_bad_string" {
  type    = string
  default = "a"
  validation {
    condition     = var.fuzz_bad_string == "b"
    error_message = "b"
  }
}
variable "fuzz_null" {
  type    = string
  default = null
}
`

// replacements are what an attribute's expression is swapped for.
var replacements = []string{
	"null", "[]", "{}", "[null]", "{ k = null }", "var.fuzz_bad_number", "var.fuzz_bad_string",
	"var.fuzz_null", "[var.fuzz_null]", "[var.fuzz_bad_string]", `"x"`, "0", "-1", "true",
	"[1, \"a\"]", `{ model = null }`, "matrix.model", "result.error_rate", `"${var.fuzz_null}"`,
}

// maxOps bounds the operations of one input (two bytes each).
const maxOps = 25

// mutate applies the operations in ops, two bytes each (what, where), to src.
func mutate(src, ops []byte) []byte {
	if len(ops) > maxOps {
		ops = ops[:maxOps] // longer inputs only grow the plan, and each run slows down
	}
	f, diags := hclwrite.ParseConfig(src, "m.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		return src
	}
	for i := 0; i+1 < len(ops); i += 2 {
		var bodies []*hclwrite.Body
		var walk func(b *hclwrite.Body)
		walk = func(b *hclwrite.Body) {
			bodies = append(bodies, b)
			for _, blk := range b.Blocks() {
				walk(blk.Body())
			}
		}
		walk(f.Body())
		body := bodies[int(ops[i+1])%len(bodies)]
		op := int(ops[i])
		switch blocks := body.Blocks(); {
		case op%16 == 14 && len(blocks) > 0:
			body.RemoveBlock(blocks[op/16%len(blocks)])
		case op%16 == 15 && len(blocks) > 0:
			// A copy parsed from the block's text: appending the block itself would link
			// one node into two places of the tree.
			text := blocks[op/16%len(blocks)].BuildTokens(nil).Bytes()
			if dup, d := hclwrite.ParseConfig(text, "d.hcl", hcl.InitialPos); !d.HasErrors() && len(dup.Body().Blocks()) > 0 {
				body.AppendBlock(dup.Body().Blocks()[0])
			}
		default:
			attrs := body.Attributes()
			if len(attrs) == 0 {
				continue
			}
			names := make([]string, 0, len(attrs))
			for n := range attrs {
				names = append(names, n)
			}
			sort.Strings(names)
			name := names[op/16%len(names)]
			if rf, d := hclwrite.ParseConfig([]byte("x = "+replacements[op%len(replacements)]+"\n"), "r.hcl", hcl.InitialPos); !d.HasErrors() {
				body.SetAttributeRaw(name, rf.Body().GetAttribute("x").Expr().BuildTokens(nil))
			}
		}
	}
	if len(ops)%2 == 1 {
		// The broken variables are errors themselves: only some inputs declare them,
		// so mutated plans that stay valid are expanded too.
		return append(f.Bytes(), brokenVars...)
	}
	return f.Bytes()
}

// FuzzLoadMutated mutates valid and invalid plans structurally (values swapped for
// null, empty collections, wrong types, values unknown through an earlier error;
// blocks dropped and duplicated): the loader never panics, and a plan it refuses has
// an error located in the source.
func FuzzLoadMutated(f *testing.F) {
	srcs := mutationSources(f)
	dir := f.TempDir()
	for i := range srcs {
		for op := 0; op < 2*len(replacements); op += 3 {
			f.Add(uint16(i), []byte{byte(op), byte(i), byte(op + 17), byte(3 * i), byte(op)})
			f.Add(uint16(i), []byte{byte(op), byte(i), byte(op*5 + 14)})
		}
	}
	f.Fuzz(func(t *testing.T, which uint16, ops []byte) {
		src := mutate(srcs[int(which)%len(srcs)], ops)
		p, diags := LoadFiles(dir, map[string][]byte{"fuzz.hcl": src}, LoadOptions{Getenv: noEnv})
		if p != nil {
			_, more := p.Cells()
			diags = append(diags, more...)
		}
		if diags.HasErrors() {
			for _, d := range diags.Errs() {
				if d.(*hcl.Diagnostic).Subject != nil {
					return
				}
			}
			t.Errorf("no error is located:\n%s\n%s", renderDiags(p, diags), src)
		}
	})
}
