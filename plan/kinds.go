package plan

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/internal/suggest"
)

// Values are checked for their kind as well as their type: a host, a URL, a duration
// and a file path are strings, but not any string. Each check below says what was
// given and, where the mistake is a common one, the value that was probably meant.

// durationUnits maps the unit words people write to Go's duration units.
var durationUnits = map[string]string{
	"": "s", "ns": "ns", "us": "us", "µs": "us", "ms": "ms", "s": "s", "m": "m", "h": "h",
	"sec": "s", "secs": "s", "second": "s", "seconds": "s",
	"min": "m", "mins": "m", "minute": "m", "minutes": "m",
	"hr": "h", "hrs": "h", "hour": "h", "hours": "h",
	"msec": "ms", "millisecond": "ms", "milliseconds": "ms",
}

var looseDuration = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-zµ]*)\s*$`)

// durationSuggestion is ` Did you mean "600s"?` for a bare number or a duration in
// words ("10 min"), or "".
func durationSuggestion(s string) string {
	m := looseDuration.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	unit, ok := durationUnits[strings.ToLower(m[2])]
	if !ok {
		return ""
	}
	if m[2] == "" {
		return fmt.Sprintf(" A bare number has no unit: did you mean %q (seconds)?", m[1]+unit)
	}
	return fmt.Sprintf(" Did you mean %q?", m[1]+unit)
}

// hostProblem says what is wrong with a hardware host (a host name or address, with an
// optional port), with the value probably meant; "" when it is one.
func hostProblem(h string) string {
	if strings.Contains(h, "://") {
		fix := ""
		if u, err := url.Parse(h); err == nil && u.Host != "" {
			fix = fmt.Sprintf(" Did you mean host = %q? The scheme and path go in the backend's url (or the matrix's url expression).", u.Host)
		}
		return fmt.Sprintf("host is a host name or address such as \"gpu1.lab\", not a URL: %q would make the cells' URLs http://%s….%s", h, h, fix)
	}
	if h == "" || strings.ContainsAny(h, "/ \t?#@") {
		return fmt.Sprintf("host is a host name or address such as \"gpu1.lab\" (a port may follow: \"gpu1.lab:11434\"), not %q.", h)
	}
	return ""
}

// urlSuggestion is the did-you-mean for a string that is not an http(s) URL with a
// host: the scheme added to "localhost:8000/v1", one scheme kept of
// "http://http://host", or "".
func urlSuggestion(s string) string {
	for _, p := range []string{"http://", "https://"} {
		for _, q := range []string{"http://", "https://"} {
			if strings.HasPrefix(s, p+q) {
				return fmt.Sprintf(" It has two schemes: did you mean %q?", strings.TrimPrefix(s, p))
			}
		}
	}
	if !strings.Contains(s, "://") && s != "" && !strings.HasPrefix(s, "/") {
		if _, ok := httpURL("http://" + s); ok {
			return fmt.Sprintf(" It has no scheme: did you mean %q?", "http://"+s)
		}
	}
	return ""
}

// pathSuggestion is ` Did you mean "data/trace.jsonl"?` for a file path that does not
// exist when a file of a near name is in the directory it names (resolved against dir),
// written as the plan wrote the path; "" when none is near or the directory is missing.
func pathSuggestion(given, dir string) string {
	full := given
	if !filepath.IsAbs(full) {
		full = filepath.Join(dir, given)
	}
	entries, err := os.ReadDir(filepath.Dir(full))
	if err != nil {
		// The directory is missing: a near directory name, with the file name kept.
		parent := filepath.Dir(given)
		if parent == "." || parent == given {
			return ""
		}
		if s := nearestEntry(parent, dir); s != "" {
			return fmt.Sprintf(" The directory %s does not exist: did you mean %q?", parent, filepath.Join(s, filepath.Base(given)))
		}
		return ""
	}
	if near := nearest(filepath.Base(full), entries); near != "" {
		return fmt.Sprintf(" Did you mean %q?", filepath.Join(filepath.Dir(given), near))
	}
	return ""
}

// nearestEntry is the path (as given) with its last element replaced by the nearest
// name in its directory, or "".
func nearestEntry(given, dir string) string {
	full := given
	if !filepath.IsAbs(full) {
		full = filepath.Join(dir, given)
	}
	entries, err := os.ReadDir(filepath.Dir(full))
	if err != nil {
		return ""
	}
	if near := nearest(filepath.Base(full), entries); near != "" {
		return filepath.Join(filepath.Dir(given), near)
	}
	return ""
}

func nearest(name string, entries []os.DirEntry) string {
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return suggest.Nearest(name, names)
}

// thinkLevel is the error for think given a reasoning level ("high"): think is the
// on/off switch, the level is reasoning_effort.
func (l *loader) thinkLevel(a *hcl.Attribute, level string) {
	l.errorf(a.Expr.Range().Ptr(), "Invalid think",
		"think is the on/off switch (true or false); a level such as %q is set with reasoning_effort: write reasoning_effort = %q instead.", level, level)
}
