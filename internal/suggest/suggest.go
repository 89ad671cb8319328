// Package suggest finds the name a user most likely meant when they mistyped one, for
// "Did you mean ...?" hints in plan diagnostics and on the command line.
package suggest

import (
	"fmt"
	"sort"

	"github.com/agext/levenshtein"
)

// Nearest is the option within two edits of given (the closest; alphabetical order
// breaks ties), never given itself, or "" when none is that close: further than two edits is noise, as in
// HCL's own suggestions.
func Nearest(given string, options []string) string {
	best, bestD := "", 3
	sorted := append([]string(nil), options...)
	sort.Strings(sorted)
	for _, o := range sorted {
		// The given name itself is no suggestion: it was rejected where it stands (a
		// name declared for another kind, say), and "did you mean x?" for x reads as noise.
		if d := levenshtein.Distance(given, o, nil); d < bestD && o != given {
			best, bestD = o, d
		}
	}
	return best
}

// DidYouMean is ` Did you mean "x"?` for the nearest option, or "" when none is near.
func DidYouMean(given string, options []string) string {
	if s := Nearest(given, options); s != "" {
		return fmt.Sprintf(" Did you mean %q?", s)
	}
	return ""
}
