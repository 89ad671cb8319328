package plan

import (
	"bytes"
	"unicode/utf8"
)

// closers are the curly quotes that close each opening one a word processor or an
// input method types.
var closers = map[rune][]rune{
	0x201C: {0x201D, 0x201C}, // “ … ” (or “ … “)
	0x2018: {0x2019, 0x2018}, // ‘ … ’
	0x300C: {0x300D},         // 「 … 」
}

// closingQuote finds, on the rest of the line from off, the curly quote that closes
// open. HCL's lexer does not know a curly quote opens a string, so in
// url = “http://host/v1” it reads the "//" as a comment and never shows strangeCharacters
// the closing quote: left unrepaired, the repaired string would run to the end of the
// file, one error per line.
func closingQuote(src []byte, open rune, off int) (at int, r rune, size int, ok bool) {
	want := closers[open]
	if want == nil {
		return 0, 0, 0, false
	}
	end := bytes.IndexByte(src[off:], '\n')
	if end < 0 {
		end = len(src) - off
	}
	for i := off; i < off+end; {
		c, n := utf8.DecodeRune(src[i:])
		for _, w := range want {
			if c == w {
				return i, c, n, true
			}
		}
		i += n
	}
	return 0, 0, 0, false
}
