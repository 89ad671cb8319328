package plan

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad: no input makes the loader or the expansion panic.
func FuzzLoad(f *testing.F) {
	for _, dir := range []string{"testdata/valid-files", "testdata/invalid-files", "../examples"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.hcl"))
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, _ := LoadFiles(t.TempDir(), map[string][]byte{"fuzz.hcl": src}, LoadOptions{Getenv: noEnv})
		if p != nil {
			p.Cells()
		}
	})
}
