package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/planrun/planrun/internal/suggest"
)

// missingPlanHint names the nearest existing plan file when the path given does not exist
// (examples/quickstrt.hcl → examples/quickstart.hcl), or "" when nothing is near.
func missingPlanHint(path string) string {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".hcl") {
			names = append(names, filepath.Join(dir, e.Name()))
		}
	}
	return suggest.DidYouMean(path, names)
}

// severalPlans explains a directory load whose errors are names declared twice in
// different files: the directory holds separate plans (as examples/ does), not one plan
// split into files. It lists the files, to validate one at a time.
func severalPlans(dir string, diags hcl.Diagnostics) *hcl.Diagnostic {
	files := map[string]bool{}
	dups := 0
	for _, d := range diags {
		if d.Severity == hcl.DiagError && strings.HasPrefix(d.Summary, "Duplicate") && d.Subject != nil {
			dups++
			files[d.Subject.Filename] = true
			if _, earlier, ok := strings.Cut(d.Detail, "declared at "); ok {
				files[strings.SplitN(earlier, ":", 2)[0]] = true
			}
		}
	}
	if dups == 0 || len(files) < 2 {
		return nil
	}
	all, _ := filepath.Glob(filepath.Join(dir, "*.hcl"))
	sort.Strings(all)
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "The directory holds several plans",
		Detail: fmt.Sprintf("A directory is read as one plan split into files, but %d names are declared in more than one of "+
			"its files, so these look like separate plans:\n  %s\nName one file: planrun validate %s", dups, strings.Join(all, "\n  "), all[0]),
	}
}
