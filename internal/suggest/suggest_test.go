package suggest

import "testing"

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
