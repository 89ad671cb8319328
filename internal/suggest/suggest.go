// Package suggest finds the name a user most likely meant when they mistyped one, for
// "Did you mean ...?" hints in plan diagnostics and on the command line.
//
// A name is near another in one of several ways, ranked: the same words in another
// spelling (case, "-" for "_", a known alias such as "zh-CN" for "zh" or "seconds"
// for "s"), the same words in another order (ttft_p99_hi_s for ttft_p99_s_hi), within
// two edits, one name the other with words added or dropped at either end
// (process_exporter for process), or the same first word (ttft_p99 for ttft_s). At most three are offered, never every name.
package suggest

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agext/levenshtein"
)

// MaxShown is the most names a suggestion offers: more reads as a list to search.
const MaxShown = 3

// How near a name is, best first.
const (
	rankSpelling  = iota // the same words spelt otherwise: case, separators, aliases
	rankOrder            // the same words in another order
	rankEdits            // within two edits
	rankEnds             // one name is the other with words added or dropped at an end
	rankFirstWord        // the same first word (ttft_p99 for ttft_s), nearest by edits
)

// aliases maps a word (lower case) to the word the plan language uses for it: locale
// codes to the languages planrun writes, units to the unit suffixes of its names.
var aliases = map[string]string{
	"zh-cn": "zh", "zh-hans": "zh", "zh-tw": "zh", "zh-hant": "zh", "zh-hk": "zh", "cn": "zh", "chinese": "zh",
	"en-us": "en", "en-gb": "en", "english": "en",
	"sec": "s", "secs": "s", "second": "s", "seconds": "s",
	"msec": "ms", "msecs": "ms", "millis": "ms", "millisecond": "ms", "milliseconds": "ms",
	"percent": "pct", "percentage": "pct",
	"tokens": "tok", "token": "tok",
	// file formats by their usual extensions: output "md", a dataset of "ndjson"
	"md": "markdown", "ndjson": "jsonl", "htm": "html",
}

// Ranked is the options given most likely stands for, best first: those as near as
// the nearest, at most MaxShown; never given itself (it was rejected where it
// stands). Ties keep alphabetical order.
func Ranked(given string, options []string) []string {
	type cand struct {
		option     string
		rank, dist int
	}
	var cands []cand
	seen := map[string]bool{}
	for _, o := range options {
		if o == given || seen[o] || o == "" {
			continue
		}
		seen[o] = true
		if r, d, ok := nearness(given, o); ok {
			cands = append(cands, cand{o, r, d})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if a.dist != b.dist {
			return a.dist < b.dist
		}
		return a.option < b.option
	})
	// Only the options as near as the best: a clear winner is shown alone, and a
	// near name is never buried among far ones.
	out := make([]string, 0, MaxShown)
	for _, c := range cands {
		if len(out) == MaxShown || c.rank != cands[0].rank || c.rank >= rankEdits && c.rank != rankEnds && c.dist != cands[0].dist {
			break
		}
		out = append(out, c.option)
	}
	return out
}

// nearness ranks how near option is to given; ok is false when it is not near at all.
// dist orders options of one rank: the edits, or the length of the words added.
func nearness(given, option string) (rank, dist int, ok bool) {
	g, o := words(given), words(option)
	switch {
	case slices.Equal(g, o):
		return rankSpelling, levenshtein.Distance(given, option, nil), true
	case sameWords(g, o):
		return rankOrder, 0, true
	}
	// Two edits of a name of two letters is another name, not a typo.
	if d := levenshtein.Distance(given, option, nil); d < 3 && d < len(given) {
		return rankEdits, d, true
	}
	if d, ok := atEnds(g, o); ok {
		return rankEnds, d, true
	}
	if len(g) > 1 && len(o) > 1 && g[0] == o[0] && len(g[0]) >= 3 {
		return rankFirstWord, levenshtein.Distance(given, option, nil), true
	}
	return 0, 0, false
}

// words splits a name into its lower-case words at "_", "-", "." and spaces, each
// word replaced by its alias; a whole name that is an alias ("zh-CN") is one word.
func words(name string) []string {
	low := strings.ToLower(strings.TrimSpace(name))
	if a, ok := aliases[strings.ReplaceAll(low, "_", "-")]; ok {
		return []string{a}
	}
	ws := strings.FieldsFunc(low, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' })
	for i, w := range ws {
		if a, ok := aliases[w]; ok {
			ws[i] = a
		}
	}
	return ws
}

// sameWords reports whether two names of several words hold the same words.
func sameWords(a, b []string) bool {
	if len(a) < 2 || len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// atEnds reports whether one name's words start or end the other's (process for
// process_exporter, max_tokens for tokens); dist is the count of words the other adds.
// The shorter must keep a word of three letters or more: "s" starts too much.
func atEnds(a, b []string) (dist int, ok bool) {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 || len(a) == len(b) || len(strings.Join(a, "")) < 3 {
		return 0, false
	}
	n := len(b) - len(a)
	return n, slices.Equal(a, b[:len(a)]) || slices.Equal(a, b[n:])
}

// Nearest is the option given most likely stands for (Ranked's first), or "" when
// none is near.
func Nearest(given string, options []string) string {
	if r := Ranked(given, options); len(r) > 0 {
		return r[0]
	}
	return ""
}

// DidYouMean is ` Did you mean "x"?`, or ` Did you mean "x", "y" or "z"?` when several
// are near, best first; "" when none is.
func DidYouMean(given string, options []string) string {
	r := Ranked(given, options)
	if len(r) == 0 {
		return ""
	}
	q := make([]string, len(r))
	for i, s := range r {
		q[i] = fmt.Sprintf("%q", s)
	}
	text := q[0]
	if len(q) > 1 {
		text = strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
	}
	return " Did you mean " + text + "?"
}

// Meant reads the names a DidYouMean text offers, best first: the names a diagnostic's
// detail says the user may have meant.
func Meant(text string) []string {
	_, rest, ok := strings.Cut(text, "Did you mean ")
	if !ok {
		return nil
	}
	rest, _, _ = strings.Cut(rest, "?")
	var out []string
	for {
		_, after, ok := strings.Cut(rest, `"`)
		if !ok {
			return out
		}
		name, tail, ok := strings.Cut(after, `"`)
		if !ok {
			return out
		}
		out = append(out, name)
		rest = tail
	}
}
