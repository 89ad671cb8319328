package plan

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// nonASCIISummary is the error for a character outside strings and comments that is
// not ASCII: HCL says only "This character is not used within the language", or
// "expected a comma" on a line where the user sees one.
const nonASCIISummary = "Non-ASCII character"

// bomSummary is the error for a byte-order mark past a file's start: two files joined.
const bomSummary = "Byte-order mark inside the file"

// lookalike is a character that stands for an ASCII one.
type lookalike struct {
	name  string
	ascii string // "" for an invisible character that stands for nothing
	// input is how it is typed by mistake, when that helps the fix.
	input string
}

// fullWidth is how a Chinese (or Japanese, Korean) input method in full-width mode
// types punctuation: the fix is its half-width mode.
const fullWidth = "a Chinese input method in full-width mode (全角) types it: switch to half-width (半角, often Shift+Space) or type the ASCII character. 中文输入法全角模式下输入的符号：请切换到半角（通常按 Shift+空格）后重新输入。"

// curly is how curly double quotes are typed: Chinese punctuation mode, or a word
// processor.
const curly = "a Chinese input method's Chinese punctuation (中文标点) or a word processor or chat program curls straight quotes. 请切换到英文标点后重新输入引号。"

// lookalikes are the characters people type for ASCII ones, by code point; the
// full-width forms U+FF01–U+FF5E are derived from ASCII (lookalikeOf).
var lookalikes = map[rune]lookalike{
	0x2013: {"EN DASH", "-", "a word processor turns a hyphen between numbers into it"},
	0x2014: {"EM DASH", "-", "a word processor turns a double hyphen into it"},
	0x2010: {"HYPHEN", "-", ""},
	0x2011: {"NON-BREAKING HYPHEN", "-", ""},
	0x2212: {"MINUS SIGN", "-", ""},
	0x00A0: {"NO-BREAK SPACE", " ", "it is pasted from a web page or a document"},
	0x3000: {"IDEOGRAPHIC SPACE", " ", fullWidth},
	0x200B: {"ZERO WIDTH SPACE", "", "it is pasted from a web page or a document and cannot be seen"},
	0xFEFF: {"BYTE ORDER MARK", "", ""},
	0x201C: {"LEFT DOUBLE QUOTATION MARK", `"`, curly},
	0x201D: {"RIGHT DOUBLE QUOTATION MARK", `"`, curly},
	0x2018: {"LEFT SINGLE QUOTATION MARK", `"`, "a word processor curls quotes; strings in a plan take straight double quotes"},
	0x2019: {"RIGHT SINGLE QUOTATION MARK", `"`, "a word processor curls quotes; strings in a plan take straight double quotes"},
	0x3001: {"IDEOGRAPHIC COMMA", ",", fullWidth},
	0x3002: {"IDEOGRAPHIC FULL STOP", ".", fullWidth},
	0x3010: {"LEFT BLACK LENTICULAR BRACKET", "[", fullWidth},
	0x3011: {"RIGHT BLACK LENTICULAR BRACKET", "]", fullWidth},
	0x300C: {"LEFT CORNER BRACKET", `"`, fullWidth},
	0x300D: {"RIGHT CORNER BRACKET", `"`, fullWidth},
	0x2026: {"HORIZONTAL ELLIPSIS", "...", ""},
	0x00D7: {"MULTIPLICATION SIGN", "*", ""},
}

// asciiNames are the Unicode names of ASCII's punctuation, for the full-width forms.
var asciiNames = map[byte]string{
	'!': "EXCLAMATION MARK", '"': "QUOTATION MARK", '#': "NUMBER SIGN", '$': "DOLLAR SIGN",
	'%': "PERCENT SIGN", '&': "AMPERSAND", '\'': "APOSTROPHE", '(': "LEFT PARENTHESIS",
	')': "RIGHT PARENTHESIS", '*': "ASTERISK", '+': "PLUS SIGN", ',': "COMMA", '-': "HYPHEN-MINUS",
	'.': "FULL STOP", '/': "SOLIDUS", ':': "COLON", ';': "SEMICOLON", '<': "LESS-THAN SIGN",
	'=': "EQUALS SIGN", '>': "GREATER-THAN SIGN", '?': "QUESTION MARK", '@': "COMMERCIAL AT",
	'[': "LEFT SQUARE BRACKET", '\\': "REVERSE SOLIDUS", ']': "RIGHT SQUARE BRACKET",
	'^': "CIRCUMFLEX ACCENT", '_': "LOW LINE", '`': "GRAVE ACCENT", '{': "LEFT CURLY BRACKET",
	'|': "VERTICAL LINE", '}': "RIGHT CURLY BRACKET", '~': "TILDE",
}

// lookalikeOf is what r stands for, and whether it is known.
func lookalikeOf(r rune) (lookalike, bool) {
	if l, ok := lookalikes[r]; ok {
		return l, true
	}
	if r < 0xFF01 || r > 0xFF5E {
		return lookalike{}, false
	}
	c := byte(r - 0xFEE0)
	name := asciiNames[c]
	switch {
	case c >= '0' && c <= '9':
		name = "DIGIT " + []string{"ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"}[c-'0']
	case c >= 'A' && c <= 'Z':
		name = "LATIN CAPITAL LETTER " + string(c)
	case c >= 'a' && c <= 'z':
		name = "LATIN SMALL LETTER " + string(c-'a'+'A')
	}
	return lookalike{"FULLWIDTH " + name, string(c), fullWidth}, true
}

// asciiText names an ASCII character so a quote or a space reads as itself:
// `the ASCII ","`, `a straight double quote (")`, `a plain space`.
func asciiText(a string) string {
	switch a {
	case `"`:
		return `a straight double quote (")`
	case " ":
		return "a plain space"
	}
	return fmt.Sprintf("the ASCII %q", a)
}

// describeRune is `"，" (U+FF0C FULLWIDTH COMMA)`.
func describeRune(r rune) string {
	name := ""
	if l, ok := lookalikeOf(r); ok {
		name = " " + l.name
	}
	shown := string(r)
	if l, ok := lookalikeOf(r); ok && (l.ascii == "" || l.ascii == " ") {
		shown = "" // an invisible or blank character shows as nothing useful
	}
	if shown == "" {
		return fmt.Sprintf("U+%04X%s", r, name)
	}
	return fmt.Sprintf("%q (U+%04X%s)", shown, r, name)
}

// strangeCharacters finds the characters outside strings and comments that are not
// ASCII, and byte-order marks anywhere but the start: one error per line, naming each
// character with its code point, its name where known and the ASCII character it
// stands for. repaired is src with each known character replaced by what it stands for
// (padded with spaces to its length, so every byte offset holds), for a parse that
// reads the rest of the file as the user meant it.
func strangeCharacters(name string, src []byte) (diags hcl.Diagnostics, repaired []byte, lines map[int]bool) {
	byLine := map[int][]strangeChar{}
	var order []int
	repaired = src
	cloned := false
	noted := map[int]bool{}
	note := func(r rune, off, size int) {
		if noted[off] {
			return
		}
		noted[off] = true
		line, col := position(src, off)
		if len(byLine[line]) == 0 {
			order = append(order, line)
		}
		byLine[line] = append(byLine[line], strangeChar{r, hcl.Pos{Line: line, Column: col, Byte: off}, hcl.Pos{Line: line, Column: col + 1, Byte: off + size}})
		if l, ok := lookalikeOf(r); ok && len(l.ascii) <= size {
			if !cloned {
				repaired, cloned = bytes.Clone(src), true
			}
			copy(repaired[off:off+size], padded(r, l.ascii, size))
		}
	}
	for _, off := range innerBOMs(src) {
		note(0xFEFF, off, 3)
	}
	tokens, _ := hclsyntax.LexConfig(src, name, hcl.InitialPos)
	for _, t := range tokens {
		switch t.Type {
		case hclsyntax.TokenQuotedLit, hclsyntax.TokenStringLit, hclsyntax.TokenComment:
			continue // the user's own text
		}
		for i := 0; i < len(t.Bytes); {
			r, size := utf8.DecodeRune(t.Bytes[i:])
			if r >= utf8.RuneSelf && r != 0xFEFF && r != utf8.RuneError {
				note(r, t.Range.Start.Byte+i, size)
				if off, r2, size2, ok := closingQuote(src, r, t.Range.Start.Byte+i+size); ok {
					note(r2, off, size2)
				}
			}
			i += size
		}
	}
	lines = map[int]bool{}
	for _, line := range order {
		fs := byLine[line]
		lines[line] = true
		summary, detail := nonASCIISummary, charactersText(fs[0].r, byLine[line])
		if fs[0].r == 0xFEFF {
			summary = bomSummary
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError, Summary: summary, Detail: detail,
			Subject: &hcl.Range{Filename: name, Start: fs[0].start, End: fs[0].end},
		})
	}
	return diags, repaired, lines
}

// innerBOMs are the offsets of the byte-order marks in src past its start (a mark at
// offset 0 is the file's own).
func innerBOMs(src []byte) []int {
	var offs []int
	for off := 3; off+3 <= len(src); {
		i := bytes.Index(src[off:], []byte("\uFEFF"))
		if i < 0 {
			break
		}
		offs = append(offs, off+i)
		off += i + 3
	}
	return offs
}

// strangeChar is one character strangeCharacters names, with its place.
type strangeChar struct {
	r          rune
	start, end hcl.Pos
}

// padded is ascii padded with spaces to size bytes: before it, except after a closing
// quote, so the padding never lands inside a string.
func padded(r rune, ascii string, size int) []byte {
	pad := strings.Repeat(" ", size-len(ascii))
	if r == 0x201D || r == 0x2019 || r == 0x300D {
		return []byte(ascii + pad)
	}
	return []byte(pad + ascii)
}

// charactersText explains one line's characters: what each is, what it stands for,
// and how it came to be typed.
func charactersText(first rune, fs []strangeChar) string {
	if first == 0xFEFF {
		return "A byte-order mark (U+FEFF BYTE ORDER MARK, invisible in most editors) marks the start of a file, and this one is inside it: two files were joined (cat a.hcl b.hcl), or one was pasted into another. Delete it (retype the line), or remove them all with sed -i 's/\\xEF\\xBB\\xBF//g' FILE."
	}
	var parts []string
	var hints []string
	seen := map[rune]bool{}
	for _, f := range fs {
		r := f.r
		if seen[r] {
			continue
		}
		seen[r] = true
		l, ok := lookalikeOf(r)
		switch {
		case !ok:
			parts = append(parts, describeRune(r)+", which stands for no ASCII character")
		case l.ascii == "":
			parts = append(parts, describeRune(r)+", an invisible character that stands for nothing: delete it")
		default:
			parts = append(parts, fmt.Sprintf("%s where the plan language needs %s", describeRune(r), asciiText(l.ascii)))
		}
		if ok && l.input != "" && !slices.Contains(hints, l.input) {
			hints = append(hints, l.input)
		}
		if !ok && !slices.Contains(hints, "names") {
			hints = append(hints, "names")
		}
	}
	text := "Outside strings and comments a plan is ASCII (字符串和注释之外只能使用 ASCII 字符). This line has " + strings.Join(parts, "; ") + "."
	for _, h := range hints {
		if h == "names" {
			text += " A name (a block's argument, a reference) is ASCII letters, digits, _ and -: put other text in a quoted string."
			continue
		}
		text += " " + strings.ToUpper(h[:1]) + h[1:]
		if !strings.HasSuffix(h, "。") {
			text += "."
		}
	}
	return text
}

// position is the line and column (in characters) of a byte offset.
func position(src []byte, off int) (line, col int) {
	line = 1 + bytes.Count(src[:off], []byte("\n"))
	lineStart := bytes.LastIndexByte(src[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(src[lineStart:off])
}

// lookalikesIn says which look-alike characters a diagnostic's subject holds (inside a
// string too: "0–3" for "0-3"), for errors about a value a character made invalid;
// "" when it holds none.
func lookalikesIn(src []byte, r hcl.Range) string {
	if r.Start.Byte < 0 || r.End.Byte > len(src) || r.Start.Byte >= r.End.Byte {
		return ""
	}
	var parts []string
	seen := map[rune]bool{}
	for _, c := range string(src[r.Start.Byte:r.End.Byte]) {
		l, ok := lookalikeOf(c)
		if !ok || seen[c] {
			continue
		}
		seen[c] = true
		if l.ascii == "" {
			parts = append(parts, describeRune(c)+", invisible")
		} else {
			parts = append(parts, fmt.Sprintf("%s, which looks like %s but is not it", describeRune(c), asciiText(l.ascii)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " The value holds " + strings.Join(parts, "; ") + ": type the ASCII character."
}

// nameLookalikes adds to each error about a value that holds a look-alike character
// (an en dash in "0–3", a full-width digit) which character it is.
func nameLookalikes(diags hcl.Diagnostics, files map[string]*hcl.File) {
	for _, d := range diags {
		if d.Subject == nil || d.Severity != hcl.DiagError || d.Summary == nonASCIISummary || d.Summary == bomSummary {
			continue
		}
		if f := files[d.Subject.Filename]; f != nil {
			d.Detail += lookalikesIn(f.Bytes, *d.Subject)
		}
	}
}

// nonASCIIName is the hint for a block name with letters that are not ASCII (a
// Chinese name): references to it could not be written, so the text goes elsewhere.
func nonASCIIName(name string) string {
	if isASCII(name) {
		return ""
	}
	return " A name is ASCII (名称只能使用 ASCII 字母、数字、_ 和 -): use a name such as \"long_prompts\", and put the words you meant in a description or notes string."
}
