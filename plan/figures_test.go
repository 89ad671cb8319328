package plan

import (
	"strings"
	"testing"
)

// TestFigureNeedsNameRealFields: each row of the figures table names result.* fields that
// exist, so a renamed field cannot leave its row checking nothing.
func TestFigureNeedsNameRealFields(t *testing.T) {
	for _, f := range figureNeeds {
		found := false
		for _, name := range ResultVariables {
			found = found || strings.HasPrefix(name, f.prefix)
		}
		if !found {
			t.Errorf("figureNeeds row %q matches no result.* field", f.prefix)
		}
	}
	for limit, fig := range sloFigures {
		found := false
		for _, name := range ResultVariables {
			found = found || strings.HasPrefix(name, fig+"_")
		}
		if !found {
			t.Errorf("slo limit %s names figure %q, which no result.* field has", limit, fig)
		}
	}
}
