package plan

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Two slips whose meaning is plain make HCL report errors on the lines after them: a
// comment after a heredoc's <<MARKER (HCL then reads the heredoc's text as arguments)
// and a single = where a condition compares (condition = result.error_rate = 0). Each is
// reported once, where it is, and repaired in the source the parser reads, as
// strangeCharacters does, so the rest of the file is read as the user meant it.

// heredocOpen is an argument whose value is a heredoc with text after its marker.
var heredocOpen = regexp.MustCompile(`(?m)^[ \t]*[A-Za-z_][A-Za-z0-9_-]*[ \t]*=[ \t]*<<-?([A-Za-z_][A-Za-z0-9_-]*)([ \t]+[^\r\n]*?)[ \t]*\r?$`)

const (
	heredocSlipSummary = "Text after a heredoc marker"
	equalsSlipSummary  = "Single = in a comparison"
)

// repairSlips finds the slips in src (already repaired of look-alike characters) and
// returns their errors, src with each repaired, and the lines they are on.
func repairSlips(name string, src []byte) (diags hcl.Diagnostics, repaired []byte, lines map[int]bool) {
	repaired, lines = src, map[int]bool{}
	edit := func() {
		if &repaired[0] == &src[0] {
			repaired = bytes.Clone(src)
		}
	}
	for _, m := range heredocOpen.FindAllSubmatchIndex(src, -1) {
		marker := string(src[m[2]:m[3]])
		closing := regexp.MustCompile(`(?m)^[ \t]*` + regexp.QuoteMeta(marker) + `[ \t]*\r?$`)
		if !closing.Match(src[m[5]:]) {
			continue // left open: openHeredoc says so
		}
		start := m[4] + len(src[m[4]:m[5]]) - len(bytes.TrimLeft(src[m[4]:m[5]], " \t"))
		text := string(src[start:m[5]])
		// The marker must end its line, so it moves right over the text, with the
		// spaces before it: "= <<EOT # x" is read as "=       <<EOT".
		open := bytes.LastIndex(src[:m[2]], []byte("<<"))
		end := m[5] + bytes.IndexByte(src[m[5]:], '\n')
		if end < m[5] {
			end = len(src)
		}
		if end > m[5] && src[end-1] == '\r' {
			end--
		}
		marked := string(src[open:m[3]])
		edit()
		copy(repaired[open:end], strings.Repeat(" ", end-open-len(marked))+marked)
		line, col := position(src, start)
		lines[line] = true
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError, Summary: heredocSlipSummary,
			Detail:  fmt.Sprintf("A heredoc's <<%s must end its line; %q after it makes HCL read the heredoc's text as arguments. Move it to the line above.", marker, text),
			Subject: &hcl.Range{Filename: name, Start: hcl.Pos{Line: line, Column: col, Byte: start}, End: hcl.Pos{Line: line, Column: col + len([]rune(text)), Byte: m[5]}},
		})
	}
	if len(repaired) == 0 {
		return diags, repaired, lines
	}
	// HCL stops reading a body at its first such error: parse again after each repair
	// (a few times at most: a plan has few comparisons).
	for range 16 {
		d := equalsSlip(repaired, name)
		if d == nil {
			break
		}
		off := d.Subject.Start.Byte
		// "a = b" becomes "a== b" (or "a ==b"): one byte, so every offset holds.
		edit()
		if repaired[off-1] == ' ' {
			repaired[off-1] = '='
		} else {
			repaired[off+1] = '='
		}
		lines[d.Subject.Start.Line] = true
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError, Summary: equalsSlipSummary,
			Detail:  "A single = sets an argument; to compare two values write == (condition = result.error_rate == 0).",
			Subject: &hcl.Range{Filename: name, Start: d.Subject.Start, End: d.Subject.End},
		})
	}
	return diags, repaired, lines
}

// equalsSlip is the first "Missing newline after argument" of src that is a single =
// with a space beside it, or nil.
func equalsSlip(src []byte, name string) *hcl.Diagnostic {
	_, parsed := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	for _, d := range parsed {
		if d.Summary != "Missing newline after argument" || d.Subject == nil {
			continue
		}
		off := d.Subject.Start.Byte
		if off < 1 || off+1 >= len(src) || src[off] != '=' || src[off+1] == '=' || (src[off-1] != ' ' && src[off+1] != ' ') {
			continue
		}
		return d
	}
	return nil
}
