package jsonscan

import (
	"errors"
	"strings"
	"testing"
)

// Every one-letter escape decodes to its byte and resumes right after the escape.
func TestUnquoteOneLetterEscapes(t *testing.T) {
	if got, want := Unquote([]byte(`a\bb\fc\nd\re\tf\"g\\h\/i`)), "a\bb\fc\nd\re\tf\"g\\h/i"; got != want {
		t.Fatalf("Unquote = %q, want %q", got, want)
	}
}

// A literal cut at the end of its line is bad, even when the bytes past the line's end
// (in the read buffer the line is a slice of) would complete it.
func TestLiteralCutAtTheEnd(t *testing.T) {
	for _, lit := range []string{"null", "true", "false"} {
		buf := []byte("[" + lit + "]")
		var s Scanner
		s.Reset(buf[:3]) // "[" and two bytes of the literal
		if !s.Array() || !s.More() {
			t.Fatalf("%s: no array: %v", lit, s.Err())
		}
		s.Skip()
		if s.Err() == nil {
			t.Fatalf("%q read as a whole %s", buf[:3], lit)
		}
	}
}

// A string cut inside or right after an escape says so, even when the buffer past the
// line's end would complete it; a complete escape at the very end is no bad escape.
func TestStringCutAtAnEscape(t *testing.T) {
	for _, c := range []struct {
		whole string
		n     int
		what  string
	}{
		{`"a\n"`, 3, "unterminated escape"},
		{`"\u0041"`, 5, "bad \\u escape"},
		{`"\u0041"`, 7, "unterminated string"},
	} {
		var s Scanner
		s.Reset([]byte(c.whole)[:c.n])
		_, ok := s.String()
		var e *SyntaxError
		if ok || !errors.As(s.Err(), &e) || e.What != c.what {
			t.Errorf("%q: ok %v, error %v; want %q", c.whole[:c.n], ok, s.Err(), c.what)
		}
	}
}

// An escaped key is decoded into the scanner's buffer up to its 60 bytes of room; a
// longer one comes back raw.
func TestEscapedKeyLength(t *testing.T) {
	for _, c := range []struct {
		n       int // bytes once decoded
		decoded bool
	}{{60, true}, {61, false}} {
		raw := `\u0061` + strings.Repeat("b", c.n-1)
		var s Scanner
		s.Reset([]byte(`{"` + raw + `":1}`))
		if !s.Object() {
			t.Fatal(s.Err())
		}
		key, ok := s.Key()
		want := raw
		if c.decoded {
			want = "a" + strings.Repeat("b", c.n-1)
		}
		if !ok || string(key) != want {
			t.Errorf("a key of %d bytes: %q, want %q", c.n, key, want)
		}
	}
}

// Surrogates at the edges of their ranges: a pair combines, anything else is U+FFFD, as
// encoding/json decodes them.
func TestSurrogateEdges(t *testing.T) {
	for raw, want := range map[string]string{
		`\uD800\uDC00`: "\U00010000", // the first pair
		`\uDBFF\uDFFF`: "\U0010FFFF", // the last pair
		`\uD83D\uDE00`: "😀",          // a pair that ends the string
		`\uDC00\uDC00`: "\uFFFD\uFFFD",
		`\uD800\uE000`: "\uFFFD\uE000",
		`\uD7FF`:       "\uD7FF",
		`\uE000`:       "\uE000",
		`\uDFFF`:       "\uFFFD",
	} {
		if got := Unquote([]byte(raw)); got != want {
			t.Errorf("Unquote(%s) = %q, want %q", raw, got, want)
		}
		var s Scanner
		s.Reset([]byte(`"` + raw + `"`))
		if n, ok := s.StringLen(); !ok || n != len(want) {
			t.Errorf("StringLen(%s) = %d, %v; want %d", raw, n, ok, len(want))
		}
	}
}

// A byte past ASCII that starts no valid UTF-8 decodes as U+FFFD, counted as its 3 bytes.
func TestInvalidByteInAnEscapedString(t *testing.T) {
	if got := Unquote([]byte("\\n\x80")); got != "\n\uFFFD" {
		t.Errorf("Unquote = %q", got)
	}
	var s Scanner
	s.Reset([]byte("\"\\n\x80\""))
	if n, ok := s.StringLen(); !ok || n != 4 {
		t.Errorf("StringLen = %d, %v; want 4", n, ok)
	}
}

// An integer asked for where the value has ended is a bad number, not a read past it.
func TestIntAtTheEnd(t *testing.T) {
	for _, in := range []string{"", "-"} {
		var s Scanner
		s.Reset([]byte(in))
		if _, ok := s.Int(); ok || s.Err() == nil {
			t.Errorf("Int of %q: ok %v, error %v; want a bad number", in, ok, s.Err())
		}
	}
}

// Fraction and exponent digits take in 0 and 9 as well as the digits between.
func TestNumberDigitEdges(t *testing.T) {
	for in, want := range map[string]int64{"1.0": 1, "2.09": 2, "9.90": 9, "1e0": 1, "3E+09": 3e9, "1e-9": 0, "1.5e1": 15} {
		var s Scanner
		s.Reset([]byte(in))
		v, ok := s.Int()
		s.End()
		if !ok || v != want || s.Err() != nil {
			t.Errorf("Int(%s) = %d, %v, error %v; want %d", in, v, ok, s.Err(), want)
		}
	}
}

// Skip takes values nested up to its limit and refuses deeper ones; Peek shows the next
// value's first byte until an error, then 0.
func TestSkipDepthAndPeek(t *testing.T) {
	arrays := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	objects := func(n int) string { return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1) }
	var s Scanner
	for _, nested := range []func(int) string{arrays, objects} {
		for n, ok := range map[int]bool{1001: true, 1002: false} {
			s.Reset([]byte(nested(n)))
			s.Skip()
			if (s.Err() == nil) != ok {
				t.Errorf("%.12s… nested %d deep: error %v, want one: %v", nested(n), n, s.Err(), !ok)
			}
		}
	}
	s.Reset([]byte(`{"a":1}`))
	if c := s.Peek(); c != '{' {
		t.Errorf("Peek = %q, want '{'", c)
	}
	s.Reset([]byte(`x`))
	s.Skip()
	if c := s.Peek(); c != 0 || s.Err() == nil {
		t.Errorf("Peek after an error = %q (error %v), want 0", c, s.Err())
	}
}

func TestRaw(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a": [1, {"b": "x\"y"}], "c": 2}`, `[1, {"b": "x\"y"}]`},
		{`{"a": null, "c": 2}`, `null`},
		{`{"a": -1.5e3}`, `-1.5e3`},
		{`{"a": [1, }`, ``}, // invalid: nil, and the error kept
		{`{"a": `, ``},
	} {
		var sc Scanner
		sc.Reset([]byte(tc.in))
		sc.Object()
		sc.Key()
		got := sc.Raw()
		if string(got) != tc.want || (tc.want == "") != (sc.Err() != nil) {
			t.Errorf("%s: Raw = %q (err %v), want %q", tc.in, got, sc.Err(), tc.want)
		}
	}
}
