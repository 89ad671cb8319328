package plan

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/planrun/planrun/internal/suggest"
	"github.com/planrun/planrun/ledger"
	"github.com/zclconf/go-cty/cty"
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
			fix = fmt.Sprintf(" Did you mean host = %q? The scheme and path go in the backend's url.", u.Host)
		}
		return fmt.Sprintf("host is a host name or address such as \"gpu1.lab\", not a URL (%q).%s", h, fix)
	}
	if strings.ContainsAny(h, "/ \t?#@") { // "" is no host: the cells run here
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
func thinkLevel(a *hcl.Attribute, level string) hcl.Diagnostics {
	var rep report
	rep.errorf(a.Expr.Range().Ptr(), "Invalid think",
		"think is the on/off switch (true or false); a level such as %q is set with reasoning_effort: write reasoning_effort = %q instead.", level, level)
	return rep.diags
}

// endpointInURL reports a backend url whose path already ends in an endpoint the
// adapter appends (or in its first part, "/api" of "/api/chat"): the requests would go
// to …/api/api/chat. base is the url meant; "" when the url is a base.
func endpointInURL(u string, endpoints []string) (endpoint, base string) {
	trimmed := strings.TrimRight(u, "/")
	for _, e := range endpoints {
		parts := []string{e}
		if i := strings.IndexByte(e[1:], '/'); i >= 0 {
			parts = append(parts, e[:i+1])
		}
		for _, p := range parts {
			if strings.HasSuffix(trimmed, p) {
				return e, strings.TrimSuffix(trimmed, p)
			}
		}
	}
	return "", ""
}

// unitSlip says when a latency is far more likely in another unit than the one its
// name says: a first token after 500 "seconds" (milliseconds meant), a token every 0.05
// "milliseconds" (seconds meant). "" when it is plausible in its unit, and for figures
// other than the request latencies, whose plausible ranges are wide.
func unitSlip(name, unit string, v float64) string {
	fig := strings.TrimPrefix(name, "result.")
	first := strings.HasPrefix(fig, "ttft") || strings.HasPrefix(fig, "ttfo")
	perToken := strings.HasPrefix(fig, "tpot") || strings.HasPrefix(fig, "itl")
	switch {
	case unit == "s" && (first && v >= 100 || strings.HasPrefix(fig, "e2e") && v >= 1000):
		return fmt.Sprintf("%s is in seconds: %g s is %s. Did you mean %g (%g ms)?", name, v, longSpan(v), v/1000, v)
	case unit == "ms" && perToken && v > 0 && v < 0.1:
		return fmt.Sprintf("%s is in milliseconds: %g ms is %g µs a token. Did you mean %g (%g s)?", name, v, v*1000, v*1000, v)
	}
	return ""
}

func longSpan(s float64) string {
	if s >= 3600 {
		return fmt.Sprintf("%.1f hours", s/3600)
	}
	return fmt.Sprintf("%.1f minutes", s/60)
}

// conditionUnitSlips warns of each comparison in a condition between a result figure
// and a number that is implausible in the figure's unit (result.ttft_p99_s < 800).
func conditionUnitSlips(expr hcl.Expression) hcl.Diagnostics {
	units := map[string]string{}
	for _, f := range ledger.ResultFields {
		units[f.Name] = f.Unit
	}
	var diags hcl.Diagnostics
	hclsyntax.VisitAll(expr.(hclsyntax.Node), func(n hclsyntax.Node) hcl.Diagnostics {
		op, ok := n.(*hclsyntax.BinaryOpExpr)
		if !ok {
			return nil
		}
		for _, pair := range [][2]hclsyntax.Expression{{op.LHS, op.RHS}, {op.RHS, op.LHS}} {
			ref, ok := pair[0].(*hclsyntax.ScopeTraversalExpr)
			lit, isLit := pair[1].(*hclsyntax.LiteralValueExpr)
			if !ok || !isLit || ref.Traversal.RootName() != "result" || lit.Val.Type() != cty.Number || !lit.Val.IsKnown() {
				continue
			}
			name := attrStep(ref.Traversal, 1)
			v, _ := lit.Val.AsBigFloat().Float64()
			if msg := unitSlip("result."+name, units[name], v); msg != "" {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Number in the wrong unit?", Detail: msg, Subject: lit.Range().Ptr()})
			}
		}
		return nil
	})
	return diags
}
