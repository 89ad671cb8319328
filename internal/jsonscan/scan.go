// Package jsonscan walks a JSON document in place, picking out the few fields a stream
// decoder needs without allocating. encoding/json costs microseconds and several
// allocations per chunk, which at 200,000 chunks/s on two cores would make the client
// the bottleneck; this scanner validates what it walks and skips the rest.
package jsonscan

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// ErrSyntax is returned (wrapped in *SyntaxError) when the input is not valid JSON where
// the scanner walked it.
var ErrSyntax = errors.New("invalid JSON")

// SyntaxError says where the input stopped making sense.
type SyntaxError struct {
	Offset int
	What   string
}

func (e *SyntaxError) Error() string {
	return "invalid JSON at byte " + strconv.Itoa(e.Offset) + ": " + e.What
}

// Unwrap lets errors.Is(err, ErrSyntax) match.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Scanner reads one JSON value from a byte slice. Methods record the first error and
// turn into no-ops after it, so callers check Err once at the end.
type Scanner struct {
	buf []byte
	pos int
	err *SyntaxError
	// key holds an unescaped object key when the raw key contained escapes.
	key [64]byte
}

// Reset points the scanner at b.
func (s *Scanner) Reset(b []byte) {
	s.buf, s.pos, s.err = b, 0, nil
}

// Err is the first syntax error met, or nil.
func (s *Scanner) Err() error {
	if s.err == nil {
		return nil
	}
	return s.err
}

func (s *Scanner) fail(what string) {
	if s.err == nil {
		s.err = &SyntaxError{Offset: s.pos, What: what}
	}
}

func (s *Scanner) ws() {
	for s.pos < len(s.buf) {
		switch s.buf[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *Scanner) peek() byte {
	s.ws()
	if s.pos >= len(s.buf) {
		return 0
	}
	return s.buf[s.pos]
}

// End checks that nothing but white space follows the value.
func (s *Scanner) End() {
	if s.err != nil {
		return
	}
	if s.peek() != 0 {
		s.fail("data after the value")
	}
}

// Null consumes a null and reports whether there was one.
func (s *Scanner) Null() bool {
	if s.err != nil || s.peek() != 'n' {
		return false
	}
	s.literal("null")
	return s.err == nil
}

func (s *Scanner) literal(lit string) {
	if len(s.buf)-s.pos < len(lit) || string(s.buf[s.pos:s.pos+len(lit)]) != lit {
		s.fail("bad literal")
		return
	}
	s.pos += len(lit)
}

// Object starts an object; it reports false (consuming it) for null and records an error
// for anything else. Iterate its members with Key.
func (s *Scanner) Object() bool { return s.open('{', "an object") }

// open consumes the opening delimiter of a container (true), or null (false); anything
// else is an error.
func (s *Scanner) open(delim byte, what string) bool {
	if s.err != nil {
		return false
	}
	switch s.peek() {
	case delim:
		s.pos++
		return true
	case 'n':
		s.literal("null")
		return false
	}
	s.fail("expected " + what)
	return false
}

// Key returns the next member's key of the object being walked (after Object, or after
// the previous member's value was consumed), or ok=false at the closing brace. The key
// is valid until the next call.
func (s *Scanner) Key() (key []byte, ok bool) {
	if s.err != nil {
		return nil, false
	}
	c := s.peek()
	if c == '}' {
		s.pos++
		return nil, false
	}
	if c == ',' {
		// A comma is only valid after a member, i.e. when the byte before (skipping
		// space) is not the opening brace.
		if s.prevNonSpace() == '{' {
			s.fail("comma after {")
			return nil, false
		}
		s.pos++
		c = s.peek()
	} else if p := s.prevNonSpace(); p != '{' {
		s.fail("expected , or }")
		return nil, false
	}
	if c != '"' {
		s.fail("expected a key")
		return nil, false
	}
	raw, escaped := s.rawString()
	if s.err != nil {
		return nil, false
	}
	if s.peek() != ':' {
		s.fail("expected :")
		return nil, false
	}
	s.pos++
	if escaped {
		return s.unescapeKey(raw), true
	}
	return raw, true
}

// prevNonSpace is the last non-space byte before pos.
func (s *Scanner) prevNonSpace() byte {
	for i := s.pos - 1; i >= 0; i-- {
		switch s.buf[i] {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return s.buf[i]
	}
	return 0
}

// Array starts an array; false (consumed) for null, an error for anything else.
func (s *Scanner) Array() bool { return s.open('[', "an array") }

// More reports whether another element follows in the array being walked, consuming
// the separator; false consumes the closing bracket.
func (s *Scanner) More() bool {
	if s.err != nil {
		return false
	}
	c := s.peek()
	prev := s.prevNonSpace()
	if c == ']' {
		if prev == ',' {
			s.fail("trailing comma")
			return false
		}
		s.pos++
		return false
	}
	if prev == '[' {
		return c != 0 || s.failed("unterminated array")
	}
	if c != ',' {
		s.fail("expected , or ]")
		return false
	}
	s.pos++
	return true
}

func (s *Scanner) failed(what string) bool {
	s.fail(what)
	return false
}

// rawString consumes a string and returns its bytes between the quotes, and whether it
// contains escapes. It validates escapes and control characters.
func (s *Scanner) rawString() (raw []byte, escaped bool) {
	s.pos++ // opening quote
	start := s.pos
	// if, not a tagless switch, in this file: a mutation tool's coverage misses the
	// conditions of a switch's cases (scripts/mutation.sh).
	for s.pos < len(s.buf) {
		c := s.buf[s.pos]
		if c == '"' {
			raw = s.buf[start:s.pos]
			s.pos++
			return raw, escaped
		}
		if c < 0x20 {
			s.fail("control character in string")
			return nil, false
		}
		if c != '\\' {
			s.pos++
			continue
		}
		escaped = true
		if s.pos+1 >= len(s.buf) {
			s.fail("unterminated escape")
			return nil, false
		}
		switch s.buf[s.pos+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.pos += 2
		case 'u':
			if s.pos+6 > len(s.buf) || !isHex4(s.buf[s.pos+2:s.pos+6]) {
				s.fail("bad \\u escape")
				return nil, false
			}
			s.pos += 6
		default:
			s.fail("bad escape")
			return nil, false
		}
	}
	s.fail("unterminated string")
	return nil, false
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		if c <= '9' {
			r |= rune(c - '0')
		} else if c <= 'F' {
			r |= rune(c - 'A' + 10)
		} else {
			r |= rune(c - 'a' + 10)
		}
	}
	return r
}

// unescapeKey decodes an escaped key into the scanner's key buffer; keys longer than it
// are returned raw (they match none of the short names decoders look for).
func (s *Scanner) unescapeKey(raw []byte) []byte {
	out := s.key[:0]
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
		} else {
			var r rune
			r, i = unescape(raw, i)
			out = utf8.AppendRune(out, r)
		}
		if len(out) > len(s.key)-utf8.UTFMax {
			return raw
		}
	}
	return out
}

// unescape decodes the escape at raw[i] ('\\'), returning the rune and the next index.
// Surrogate pairs combine; a lone surrogate becomes U+FFFD, as encoding/json does.
func unescape(raw []byte, i int) (rune, int) {
	switch raw[i+1] {
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	case 'u':
		return unicodeEscape(raw, i)
	}
	return rune(raw[i+1]), i + 2
}

// unicodeEscape decodes the \uXXXX escape at raw[i], with the low surrogate's escape
// after it when it is a high surrogate.
func unicodeEscape(raw []byte, i int) (rune, int) {
	r := hex4(raw[i+2 : i+6])
	if 0xD800 <= r && r < 0xDC00 && i+12 <= len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
		r2 := hex4(raw[i+8 : i+12])
		if 0xDC00 <= r2 && r2 < 0xE000 {
			return (r-0xD800)<<10 | (r2 - 0xDC00) + 0x10000, i + 12
		}
	}
	if 0xD800 <= r && r < 0xE000 {
		return utf8.RuneError, i + 6
	}
	return r, i + 6
}

// StringLen consumes a string and returns the length in bytes of its decoded UTF-8 text
// (invalid UTF-8 counts as U+FFFD, as encoding/json decodes it). null gives ok=false.
func (s *Scanner) StringLen() (n int, ok bool) {
	_, n, ok = s.StringRaw()
	return n, ok
}

// StringRaw is StringLen that also returns the raw (still escaped) bytes, valid until
// the next Reset: a decoder hands them on without allocating, and they are unescaped
// (Unquote) only where the text itself is wanted.
func (s *Scanner) StringRaw() (raw []byte, n int, ok bool) {
	raw, ok = s.String()
	if !ok {
		return nil, 0, false
	}
	return raw, decodedLen(raw), true
}

// String consumes a string and returns its raw (still escaped) bytes, valid until the
// next Reset. null gives ok=false.
func (s *Scanner) String() (raw []byte, ok bool) {
	if s.err != nil {
		return nil, false
	}
	switch s.peek() {
	case '"':
		raw, _ = s.rawString()
		return raw, s.err == nil
	case 'n':
		s.literal("null")
		return nil, false
	}
	s.fail("expected a string")
	return nil, false
}

// Unquote decodes raw string bytes (as String returns them) into text; it allocates, so
// it is for rare fields (error messages), not per chunk.
func Unquote(raw []byte) string {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == '\\' {
			var r rune
			r, i = unescape(raw, i)
			out = utf8.AppendRune(out, r)
		} else if c < utf8.RuneSelf {
			out = append(out, c)
			i++
		} else {
			r, size := utf8.DecodeRune(raw[i:])
			out = utf8.AppendRune(out, r)
			i += size
		}
	}
	return string(out)
}

func decodedLen(raw []byte) int {
	n := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == '\\' {
			var r rune
			r, i = unescape(raw, i)
			n += utf8.RuneLen(r)
		} else if c < utf8.RuneSelf {
			n++
			i++
		} else {
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				n += 3 // encoding/json writes U+FFFD for invalid bytes
			} else {
				n += size
			}
			i += size
		}
	}
	return n
}

// Int consumes a number and returns it as an int64; a fraction or exponent is truncated
// toward zero, and a number past int64's range gives the nearest int64. null gives
// ok=false.
func (s *Scanner) Int() (v int64, ok bool) {
	if s.err != nil {
		return 0, false
	}
	if s.peek() == 'n' {
		s.literal("null")
		return 0, false
	}
	start := s.pos
	integral := s.number()
	if s.err != nil {
		return 0, false
	}
	num := s.buf[start:s.pos]
	if integral {
		neg := num[0] == '-'
		if neg {
			num = num[1:]
		}
		if len(num) <= 18 {
			for _, c := range num {
				v = v*10 + int64(c-'0')
			}
			if neg {
				v = -v
			}
			return v, true
		}
		// Past int64's range ParseInt fails with the nearest int64, which is the value.
		v, _ = strconv.ParseInt(string(s.buf[start:s.pos]), 10, 64)
		return v, true
	}
	// Past int64's range (or float64's: ±Inf) the nearest int64, as for integers: Go's
	// conversion of such a float is not defined (amd64 gives math.MinInt64 either way).
	f, _ := strconv.ParseFloat(string(num), 64)
	if f >= 1<<63 {
		return math.MaxInt64, true
	}
	return int64(max(f, -1<<63)), true
}

// number consumes a JSON number and reports whether it is a plain integer.
func (s *Scanner) number() (integral bool) {
	b := s.buf
	i := s.pos
	if i < len(b) && b[i] == '-' {
		i++
	}
	i, ok := intPart(b, i)
	if !ok {
		return s.badNumber(i, "bad number")
	}
	integral = true
	if i < len(b) && b[i] == '.' {
		integral = false
		j := digits(b, i+1)
		if j == i+1 {
			return s.badNumber(j, "bad fraction")
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integral = false
		if i, ok = exponent(b, i+1); !ok {
			return s.badNumber(i, "bad exponent")
		}
	}
	s.pos = i
	return integral
}

// intPart is the index past a number's integer part at i: 0, or digits that do not
// start with 0. ok is false when there is none.
func intPart(b []byte, i int) (int, bool) {
	switch {
	case i < len(b) && b[i] == '0':
		return i + 1, true
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		return digits(b, i), true
	}
	return i, false
}

// exponent is the index past an exponent's sign and digits at i (past its e); ok is
// false when it has no digit.
func exponent(b []byte, i int) (int, bool) {
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	j := digits(b, i)
	return j, j > i
}

// digits is the index past the decimal digits of b from i.
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// badNumber fails the scan at i, a number's bad part.
func (s *Scanner) badNumber(i int, why string) bool {
	s.pos = i
	s.fail(why)
	return false
}

// Bool consumes true or false; null gives false.
func (s *Scanner) Bool() bool {
	if s.err != nil {
		return false
	}
	switch s.peek() {
	case 't':
		s.literal("true")
		return s.err == nil
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		s.fail("expected a boolean")
	}
	return false
}

// Skip consumes any value, validating it.
func (s *Scanner) Skip() {
	s.skip(0)
}

func (s *Scanner) skip(depth int) {
	if s.err != nil {
		return
	}
	if depth > 1000 {
		s.fail("nested too deep")
		return
	}
	switch s.peek() {
	case '{':
		s.pos++
		for _, ok := s.Key(); ok; _, ok = s.Key() {
			s.skip(depth + 1)
		}
	case '[':
		s.pos++
		for s.More() {
			s.skip(depth + 1)
		}
	case '"':
		s.rawString()
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		s.number()
	case 0:
		s.fail("unexpected end")
	default:
		s.fail("unexpected byte")
	}
}

// Peek returns the first byte of the next value ('{', '[', '"', 't', 'f', 'n', a digit
// or '-'), or 0 at the end, without consuming it.
func (s *Scanner) Peek() byte {
	if s.err != nil {
		return 0
	}
	return s.peek()
}

// Raw consumes any value, validating it, and returns its bytes as they stand in the
// input (valid until the next Reset; nil when the value is invalid): a value kept whole,
// such as Ollama's tool-call arguments object, or a rare field a decoder hands to
// encoding/json rather than scan itself.
func (s *Scanner) Raw() []byte {
	if s.err != nil {
		return nil
	}
	s.ws()
	start := s.pos
	s.skip(0)
	if s.err != nil {
		return nil
	}
	return s.buf[start:s.pos]
}
