package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A directory of separate plans (examples/) is said to be one, with its files listed,
// instead of a cascade of "Duplicate variable block" errors.
func TestLoadDirectoryOfSeveralPlans(t *testing.T) {
	dir := t.TempDir()
	src := "variable \"url\" { default = \"http://127.0.0.1:8000/v1\" }\nbackend \"openai\" \"b\" { url = var.url }\n"
	for _, n := range []string{"a.hcl", "b.hcl"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, diags := Load(dir, LoadOptions{})
	if len(diags) != 1 || diags[0].Summary != "The directory holds several plans" {
		t.Fatalf("diags = %v", diags)
	}
	for _, want := range []string{filepath.Join(dir, "a.hcl"), filepath.Join(dir, "b.hcl"), "planrun validate " + filepath.Join(dir, "a.hcl")} {
		if !strings.Contains(diags[0].Detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, diags[0].Detail)
		}
	}
}

func TestLoadMissingFileSuggestsNearest(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "quickstart.hcl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, diags := Load(filepath.Join(dir, "quickstrt.hcl"), LoadOptions{})
	want := `Did you mean "` + filepath.Join(dir, "quickstart.hcl") + `"?`
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, want) {
		t.Fatalf("diags = %v, want a detail with %s", diags, want)
	}
}
