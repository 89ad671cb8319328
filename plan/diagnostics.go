package plan

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// WriteDiagnostics renders diagnostics for a person: severity and summary, then
// file:line:col and the block it is in, the source lines of the subject underlined,
// the values of the references involved ("var.tool is null"), then the detail. files
// supplies the source (Plan.Files); a diagnostic without a subject prints no snippet.
func WriteDiagnostics(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics, color bool) {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	for _, d := range diags {
		sev, code := "Error", "1;31"
		if d.Severity == hcl.DiagWarning {
			sev, code = "Warning", "1;33"
		}
		fmt.Fprintf(w, "%s: %s\n", paint(code, sev), paint("1", d.Summary))
		if s := d.Subject; s != nil {
			f := files[s.Filename]
			fmt.Fprintf(w, "  --> %s:%d:%d%s\n", s.Filename, s.Start.Line, s.Start.Column, blockContext(f, s.Start))
			if f != nil {
				writeSnippet(w, f.Bytes, s, paint)
			}
			writeValues(w, d, len(fmt.Sprint(s.End.Line)))
		}
		if d.Detail != "" {
			fmt.Fprintf(w, "%s\n", d.Detail)
		}
		fmt.Fprintln(w)
	}
}

// blockContext names the top-level block around pos (`, in backend "openai" "vllm"`).
func blockContext(f *hcl.File, pos hcl.Pos) string {
	if f == nil || f.Body == nil {
		return ""
	}
	b := f.OutermostBlockAtPos(pos)
	if b == nil {
		return ""
	}
	ctx := ", in " + b.Type
	for _, l := range b.Labels {
		ctx += fmt.Sprintf(" %q", l)
	}
	return ctx
}

// maxSnippetLines bounds a multi-line subject's snippet; longer ones show their ends.
const maxSnippetLines = 8

func writeSnippet(w io.Writer, src []byte, s *hcl.Range, paint func(string, string) string) {
	lines := bytes.Split(src, []byte("\n"))
	if s.Start.Line < 1 || s.Start.Line > len(lines) {
		return
	}
	last := s.End.Line
	if last < s.Start.Line || last > len(lines) || s.End.Line > s.Start.Line && s.End.Column == 1 {
		last = max(s.Start.Line, min(last-1, len(lines)))
	}
	pad := strings.Repeat(" ", len(fmt.Sprint(last)))
	fmt.Fprintf(w, "%s |\n", pad)
	for n := s.Start.Line; n <= last; n++ {
		if last-s.Start.Line >= maxSnippetLines && n == s.Start.Line+maxSnippetLines/2 {
			fmt.Fprintf(w, "%s | ...\n", pad)
			n = last - maxSnippetLines/2 + 1
		}
		line := strings.TrimRight(string(lines[n-1]), "\r")
		fmt.Fprintf(w, "%*d | %s\n", len(pad), n, line)
		// Underline the subject's part of the line; tabs are kept so the marks line up.
		// A continuation line is underlined from its first non-blank character.
		startCol := utf8.RuneCountInString(line) - utf8.RuneCountInString(strings.TrimLeft(line, " \t")) + 1
		endCol := utf8.RuneCountInString(line) + 1
		if n == s.Start.Line {
			startCol = s.Start.Column
		}
		if n == s.End.Line && s.End.Column > startCol {
			endCol = s.End.Column
		}
		fmt.Fprintf(w, "%s | %s%s\n", pad, indentTo(line, startCol), paint("1;31", strings.Repeat("^", max(endCol-startCol, 1))))
	}
}

// indentTo is the blank before column col of line, its tabs kept so that marks under
// the line line up with it.
func indentTo(line string, col int) string {
	var under strings.Builder
	for i, r := range []rune(line) {
		if i >= col-1 {
			break
		}
		if r == '\t' {
			under.WriteRune('\t')
		} else {
			under.WriteRune(' ')
		}
	}
	return under.String()
}

// writeValues prints the values of the references in the diagnostic's expression, as
// Terraform does, so "Invalid tool" shows that var.tool is null.
func writeValues(w io.Writer, d *hcl.Diagnostic, width int) {
	if d.Expression == nil || d.EvalContext == nil {
		return
	}
	pad := strings.Repeat(" ", width)
	seen := map[string]bool{}
	var lines []string
	for _, t := range d.Expression.Variables() {
		name := traversalText(t)
		v, diags := t.TraverseAbs(d.EvalContext)
		if seen[name] || diags.HasErrors() || t.RootName() == "backend" && v.IsKnown() && !v.IsNull() {
			continue // a block reference's object says nothing its name does not
		}
		seen[name] = true
		desc := describeValue(v)
		if t.RootName() == "result" && !v.IsKnown() {
			desc = "is " + article(v.Type().FriendlyName()) + ", known once measured"
		}
		lines = append(lines, fmt.Sprintf("%s │ %s %s", pad, name, desc))
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "%s ├────────────────\n%s\n", pad, strings.Join(lines, "\n"))
	}
}

// describeValue is "is null", `is "a"`, "is a number, unknown here" or "is a list of 3 strings".
func describeValue(v cty.Value) string {
	if v.ContainsMarked() {
		return "is sensitive (not shown)"
	}
	switch {
	case v.IsNull():
		return "is null"
	case !v.IsKnown():
		if v.Type() == cty.DynamicPseudoType {
			return "is unknown here (it depends on a mistake reported above)"
		}
		return "is " + article(v.Type().FriendlyName()) + ", unknown here"
	case !v.IsWhollyKnown() || v.Type().IsObjectType() && v.Type().HasAttribute("ref"):
		return "is " + article(v.Type().FriendlyName())
	}
	text := strings.TrimSpace(string(hclwrite.TokensForValue(v).Bytes()))
	if len(text) > 80 || strings.Contains(text, "\n") {
		if v.CanIterateElements() {
			return fmt.Sprintf("is %s of %d elements", article(v.Type().FriendlyName()), v.LengthInt())
		}
		return "is " + article(v.Type().FriendlyName())
	}
	return "is " + text
}

// article puts "a" or "an" before a type name.
func article(name string) string {
	if strings.IndexByte("aeiou", name[0]) >= 0 {
		return "an " + name
	}
	return "a " + name
}
