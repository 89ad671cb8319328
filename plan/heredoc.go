package plan

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// openHeredoc moves HCL's "Unterminated template string" for a heredoc left open from
// the end of the file, where HCL puts it, to the <<MARKER that opened it, and says which
// line ends it: the user looks for the opening, not the file's last line.
func openHeredoc(name string, src []byte, diags hcl.Diagnostics) hcl.Diagnostics {
	var open *hclsyntax.Token
	tokens, _ := hclsyntax.LexConfig(src, name, hcl.InitialPos)
	for i := range tokens {
		switch tokens[i].Type {
		case hclsyntax.TokenOHeredoc:
			open = &tokens[i]
		case hclsyntax.TokenCHeredoc:
			open = nil
		}
	}
	if open == nil {
		return diags
	}
	marker := strings.TrimSpace(strings.TrimLeft(string(open.Bytes), "<-"))
	r := open.Range
	r.End = hcl.Pos{Line: r.Start.Line, Column: r.Start.Column + len(strings.TrimRight(string(open.Bytes), "\r\n")), Byte: r.Start.Byte + len(strings.TrimRight(string(open.Bytes), "\r\n"))}
	for _, d := range diags {
		if d.Summary != "Unterminated template string" || d.Subject == nil || d.Subject.Start.Byte < open.Range.Start.Byte {
			continue
		}
		d.Subject = &r
		d.Detail = fmt.Sprintf("The heredoc opened here with <<%s has no closing line before the end of the file: end it with a line holding only %s (indenting it is fine), after the text's last line.", marker, marker)
	}
	return diags
}
