package plan

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// WriteDiagnostics renders diagnostics for a person: severity and summary, then
// file:line:col, the source line with the subject underlined, then the detail. files
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
			fmt.Fprintf(w, "  --> %s:%d:%d\n", s.Filename, s.Start.Line, s.Start.Column)
			if f := files[s.Filename]; f != nil {
				writeSnippet(w, f.Bytes, s, paint)
			}
		}
		if d.Detail != "" {
			fmt.Fprintf(w, "%s\n", d.Detail)
		}
		fmt.Fprintln(w)
	}
}

func writeSnippet(w io.Writer, src []byte, s *hcl.Range, paint func(string, string) string) {
	lines := bytes.Split(src, []byte("\n"))
	if s.Start.Line < 1 || s.Start.Line > len(lines) {
		return
	}
	line := strings.TrimRight(string(lines[s.Start.Line-1]), "\r")
	num := fmt.Sprint(s.Start.Line)
	pad := strings.Repeat(" ", len(num))
	fmt.Fprintf(w, "%s |\n%s | %s\n", pad, num, line)
	// Underline the subject on its first line; tabs are kept so the marks line up.
	startCol := s.Start.Column
	endCol := utf8.RuneCountInString(line) + 1
	if s.End.Line == s.Start.Line && s.End.Column > startCol {
		endCol = s.End.Column
	}
	var under strings.Builder
	for i, r := range []rune(line) {
		if i >= startCol-1 {
			break
		}
		if r == '\t' {
			under.WriteRune('\t')
		} else {
			under.WriteRune(' ')
		}
	}
	n := endCol - startCol
	if n < 1 {
		n = 1
	}
	fmt.Fprintf(w, "%s | %s%s\n", pad, under.String(), paint("1;31", strings.Repeat("^", n)))
}
