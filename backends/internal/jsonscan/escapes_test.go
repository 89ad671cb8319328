package jsonscan

import "testing"

// Every one-letter escape decodes to its byte and resumes right after the escape.
func TestUnquoteOneLetterEscapes(t *testing.T) {
	if got, want := Unquote([]byte(`a\bb\fc\nd\re\tf\"g\\h\/i`)), "a\bb\fc\nd\re\tf\"g\\h/i"; got != want {
		t.Fatalf("Unquote = %q, want %q", got, want)
	}
}
