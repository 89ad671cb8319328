package suggest

import (
	"fmt"
	"slices"
	"testing"
)

func TestDidYouMean(t *testing.T) {
	opts := []string{"apply", "plan", "compare", "validate"}
	for _, c := range []struct{ given, want string }{
		{"aply", ` Did you mean "apply"?`},
		{"compre", ` Did you mean "compare"?`},
		{"zzzzzz", ""},
		// A name that is itself an option was rejected for another reason: never
		// suggest it back, only another option near it.
		{"plan", ""},
		{"apply", ""},
	} {
		t.Run(c.given, func(t *testing.T) {
			if got := DidYouMean(c.given, opts); got != c.want {
				t.Fatalf("DidYouMean(%q) = %q, want %q", c.given, got, c.want)
			}
		})
	}
}

// figures stand for a long list of names, such as result.* (over a hundred).
var figures = func() []string {
	var out []string
	for _, d := range []string{"ttft", "tpot", "itl", "e2e"} {
		for _, p := range []string{"p50", "p90", "p99"} {
			out = append(out, fmt.Sprintf("%s_%s_s", d, p), fmt.Sprintf("%s_%s_s_lo", d, p), fmt.Sprintf("%s_%s_s_hi", d, p))
		}
	}
	return append(out, "process", "telemetry", "max_tokens", "max_requests", "max_duration", "en", "zh", "ttft_s", "tpot_ms", "markdown", "jsonl", "html")
}()

func TestRanked(t *testing.T) {
	for _, c := range []struct {
		given string
		want  []string
	}{
		{"ttft_p99_hi_s", []string{"ttft_p99_s_hi"}},                    // parts swapped
		{"process_exporter", []string{"process"}},                       // a word added at the end
		{"exporter_process", []string{"process"}},                       // ... or at the start
		{"zh-CN", []string{"zh"}},                                       // a locale code
		{"zh_Hans", []string{"zh"}},                                     // written with an underscore
		{"english", []string{"en"}},                                     // a language's name
		{"ttft_seconds", []string{"ttft_s"}},                            // a unit's long name
		{"tpot_milliseconds", []string{"tpot_ms"}},                      // another
		{"md", []string{"markdown"}},                                    // a format by its extension
		{"ndjson", []string{"jsonl"}},                                   // another name for it
		{"Max_Tokens", []string{"max_tokens"}},                          // case
		{"max-tokens", []string{"max_tokens"}},                          // a dash for an underscore
		{"max_tokns", []string{"max_tokens"}},                           // within two edits
		{"max", []string{"max_duration", "max_requests", "max_tokens"}}, // several alike: three, alphabetical
		{"ttft", []string{"ttft_s"}},                                    // a unit dropped is nearer than a percentile
		{"s", nil},                                                      // too short to start anything
		{"wholly_unrelated", nil},
	} {
		t.Run(c.given, func(t *testing.T) {
			got := Ranked(c.given, figures)
			if !slices.Equal(got, c.want) {
				t.Fatalf("Ranked(%q) = %q, want %q", c.given, got, c.want)
			}
			if len(got) > MaxShown {
				t.Fatalf("%d shown", len(got))
			}
		})
	}
}

// No suggestion lists every name, however many match.
func TestRankedIsNeverTheList(t *testing.T) {
	var many []string
	for i := range 50 {
		many = append(many, fmt.Sprintf("ttft_%d", i))
	}
	if got := Ranked("ttft", many); len(got) != MaxShown {
		t.Fatalf("Ranked over 50 alike names = %q, want %d", got, MaxShown)
	}
}

func TestMeant(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{`No such name. Did you mean "a"?`, []string{"a"}},
		{`x` + DidYouMean("max", figures) + ` More text "quoted".`, []string{"max_duration", "max_requests", "max_tokens"}},
		{`No suggestion "here".`, nil},
	} {
		if got := Meant(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Meant(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
