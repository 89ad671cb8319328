package main

import (
	"strings"
	"testing"
)

// plan -json says how a workload's lengths are drawn and which dataset it reads, so two
// plans' loads can be told apart from the JSON alone.
func TestPlanJSONShowsDrawnLengths(t *testing.T) {
	code, out, errs := runCmd(t, "", "plan", "-json", "../../examples/datasets.hcl")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{`"prompt_length": "dataset"`, `"output_length": "normal(64, 16, 16, 128)"`, `"dataset": "questions"`} {
		if !strings.Contains(out, want) {
			t.Errorf("plan -json lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "no_stream") {
		t.Errorf("a streamed workload says no_stream")
	}
}
