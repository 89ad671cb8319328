package compare

import (
	"strings"

	"github.com/planrun/planrun/ledger"
)

// unsettled names the sides of d whose row may not describe the server alone: an
// unstable row (its runs disagree by more than 30%) or a contended one (other processes
// took the server's cores during its window), e.g. "B contended 45%". Compare notes
// them, and a gate's breach on such a pair says so, the same for either reason.
func unsettled(d Delta) []string {
	var out []string
	for _, s := range []struct {
		name string
		r    *ledger.Row
	}{{"A", d.A}, {"B", d.B}} {
		if s.r == nil {
			continue
		}
		if why := s.r.Unsettled(); why != "" {
			out = append(out, s.name+" "+why)
		}
	}
	return out
}

// unsettledSuffix is what a breach's line adds when a side is unsettled.
func unsettledSuffix(why string) string {
	if why == "" {
		return ""
	}
	return " [" + why + ": the change may be the machine's, not the server's; rerun it quiet before trusting it]"
}

// unsettledOf is unsettled's sides joined, for a Breach.
func unsettledOf(d Delta) string { return strings.Join(unsettled(d), ", ") }
