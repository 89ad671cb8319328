package jsonscan

import (
	"encoding/json"
	"errors"
	"testing"
)

func validates(in string) error {
	var s Scanner
	s.Reset([]byte(in))
	s.Skip()
	s.End()
	return s.Err()
}

// TestSkipAgreesWithEncodingJSON holds the validator to json.Valid on the shapes a
// stream can take, good and broken.
func TestSkipAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e3`, `-12E-2`, `"x"`, ` { "a" : [ 1 , {"b":null} ] } `,
		`{"a":"\u00e9\ud83d\ude00\n\"\\\/"}`, `[[[[[]]]]]`, `{"a":{"b":{"c":[true,false]}}}`,
		``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,"a":1}`, `{"a" 1}`, `[1,]`, `[,1]`, `[1 2]`, `01`, `1.`,
		`1e`, `-`, `.5`, `"abc`, `"\x"`, `"\u12"`, "\"a\tb\"", `tru`, `nul`, `[1]x`, `{"a":1}{"b":2}`, `{1:2}`,
		`"\ud800"`, `[` + `"` + "\xff" + `"]`,
	} {
		want := json.Valid([]byte(in))
		err := validates(in)
		if (err == nil) != want {
			t.Errorf("%q: scanner error %v, json.Valid %v", in, err, want)
		}
		if err != nil && !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: error %v is not ErrSyntax", in, err)
		}
	}
}

func TestSyntaxErrorOffset(t *testing.T) {
	var se *SyntaxError
	err := validates(`{"a":1,"b":x}`)
	if !errors.As(err, &se) || se.Offset != 11 {
		t.Fatalf("error %v, want one at byte 11", err)
	}
	if msg := err.Error(); msg != "invalid JSON at byte 11: "+se.What || se.What == "" {
		t.Fatalf("message %q (what %q)", msg, se.What)
	}
}

// TestStringLen compares the decoded length with encoding/json's decoding, escapes,
// surrogate pairs, lone surrogates and invalid UTF-8 included.
func TestStringLen(t *testing.T) {
	for _, in := range []string{
		`""`, `"abc"`, `"\n\t\""`, `"\u00e9"`, `"é"`, `"\ud83d\ude00"`, `"😀"`, `"\ud800"`, `"\udc00x"`,
		`"\ud83dx"`, "\"\xff\xfe\"", `"\/"`, `"日本語"`,
		`"\u00E9\u00c9"`, `"\uD83D\uDE00"`, `"\u0041\u004F\u005a"`, // upper-case hex digits, 9/A/F/a/f edges
		`"\u0039\u003A\u003F\u0040\u0060\u0066"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		var s Scanner
		s.Reset([]byte(in))
		n, ok := s.StringLen()
		if !ok || s.Err() != nil || n != len(want) {
			t.Errorf("%q: StringLen %d (ok %v, err %v), encoding/json decodes %d bytes", in, n, ok, s.Err(), len(want))
		}
		s.Reset([]byte(in))
		raw, _ := s.String()
		if got := Unquote(raw); got != want {
			t.Errorf("%q: Unquote %q, want %q", in, got, want)
		}
	}
	var s Scanner
	s.Reset([]byte(`null`))
	if _, ok := s.StringLen(); ok || s.Err() != nil {
		t.Errorf("null: ok %v err %v", ok, s.Err())
	}
	s.Reset([]byte(`12`))
	if _, ok := s.String(); ok || s.Err() == nil {
		t.Error("a number read as a string")
	}
}

func TestInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-7", -7, true}, {"81234567", 81234567, true}, {"9223372036854775807", 1<<63 - 1, true},
		{"-9223372036854775808", -1 << 63, true}, {"1.9", 1, true}, {"-2.5e1", -25, true}, {"1e3", 1000, true},
		{"null", 0, false},
		// Past int64: the nearest int64, whether written as an integer or not (a 20-digit
		// integer must not wrap around in the 18-digit loop; 2^63 as a float converts to
		// math.MinInt64 on amd64).
		{"99999999999999999999", 1<<63 - 1, true}, {"-99999999999999999999", -1 << 63, true},
		{"9223372036854775808", 1<<63 - 1, true}, {"-9223372036854775809", -1 << 63, true},
		{"9.223372036854775808e18", 1<<63 - 1, true}, {"1e19", 1<<63 - 1, true}, {"-1e19", -1 << 63, true},
		{"1e400", 1<<63 - 1, true}, {"-1e400", -1 << 63, true}, {"-9.223372036854775808e18", -1 << 63, true},
		{"9.2233720368547748e18", 9223372036854774784, true},
	} {
		var s Scanner
		s.Reset([]byte(tc.in))
		got, ok := s.Int()
		if got != tc.want || ok != tc.ok || s.Err() != nil {
			t.Errorf("Int(%s) = %d, %v (err %v), want %d, %v", tc.in, got, ok, s.Err(), tc.want, tc.ok)
		}
	}
}

func TestBoolAndNull(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   bool
		hasErr bool
	}{{"true", true, false}, {"false", false, false}, {"null", false, false}, {"1", false, true}, {"trUe", false, true}} {
		var s Scanner
		s.Reset([]byte(tc.in))
		if got := s.Bool(); got != tc.want || (s.Err() != nil) != tc.hasErr {
			t.Errorf("Bool(%s) = %v, err %v", tc.in, got, s.Err())
		}
	}
	var s Scanner
	s.Reset([]byte(`null`))
	if !s.Null() || s.Object() {
		t.Error("Null")
	}
}

// TestWalk reads fields the way the decoders do, escaped keys included, and checks that
// a null object or array is consumed as absent.
func TestWalk(t *testing.T) {
	in := `{"choices":[{"delta":{"c\u006fntent":"hi"},"x":[1,{"y":2}]}],"usage":null,"list":null,"n":3}`
	var s Scanner
	s.Reset([]byte(in))
	var content, n int
	var sawUsage, sawList bool
	if !s.Object() {
		t.Fatal("not an object")
	}
	for key, ok := s.Key(); ok; key, ok = s.Key() {
		switch string(key) {
		case "choices":
			for s.Array(); s.More(); {
				s.Object()
				for key, ok := s.Key(); ok; key, ok = s.Key() {
					if string(key) != "delta" {
						s.Skip()
						continue
					}
					s.Object()
					for key, ok := s.Key(); ok; key, ok = s.Key() {
						if string(key) == "content" {
							content, _ = s.StringLen()
						} else {
							s.Skip()
						}
					}
				}
			}
		case "usage":
			sawUsage = s.Object()
		case "list":
			sawList = s.Array()
		case "n":
			v, _ := s.Int()
			n = int(v)
		default:
			s.Skip()
		}
	}
	s.End()
	if s.Err() != nil || content != 2 || n != 3 || sawUsage || sawList {
		t.Fatalf("err %v content %d n %d usage %v list %v", s.Err(), content, n, sawUsage, sawList)
	}
	if s.Peek() != 0 {
		t.Error("Peek at the end")
	}
}

func TestErrorsStick(t *testing.T) {
	var s Scanner
	s.Reset([]byte(`{"a":?}`))
	s.Object()
	s.Key()
	s.Skip()
	first := s.Err()
	s.Skip()
	s.End()
	if first == nil || s.Err() != first {
		t.Fatalf("first error %v, later %v", first, s.Err())
	}
	if _, ok := s.Key(); ok {
		t.Error("Key after an error")
	}
}

// TestNoAllocations: walking a typical chunk must not allocate (the reason the scanner
// exists).
func TestNoAllocations(t *testing.T) {
	in := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" tok\u00e9"},"logprobs":null,"finish_reason":null}]}`)
	var s Scanner
	allocs := testing.AllocsPerRun(100, func() {
		s.Reset(in)
		s.Skip()
		s.End()
		s.Reset(in)
		s.Object()
		for _, ok := s.Key(); ok; _, ok = s.Key() {
			s.Skip()
		}
	})
	if allocs != 0 || s.Err() != nil {
		t.Fatalf("%v allocations per walk, err %v", allocs, s.Err())
	}
}

// BenchmarkSkipChunk is the cost of validating one vLLM chunk.
func BenchmarkSkipChunk(b *testing.B) {
	in := []byte(`{"id":"chatcmpl-8d3a","object":"chat.completion.chunk","created":1735787045,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":null}]}`)
	var s Scanner
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		s.Reset(in)
		s.Skip()
		s.End()
	}
}
