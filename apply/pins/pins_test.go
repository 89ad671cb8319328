package pins

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planrun/planrun/plan"
)

// A pinned cell whose Ollama runner logged more threads than the cores the server was
// allowed says so on its row, and names the protocol when it could not set num_thread;
// a runner within its cores, an unpinned cell and a log without the count say nothing.
func TestOversubscribedThreads(t *testing.T) {
	dir, n := t.TempDir(), 0
	log := func(s string) string {
		n++
		p := filepath.Join(dir, fmt.Sprintf("ollama-%d.log", n))
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	twoThenOne := log(`load request="{... NumThreads:2 ...}"` + "\n" + `load request="{... NumThreads:1 ...}"` + "\n")
	oneThenTwo := log(`load request="{... NumThreads:1 ...}"` + "\n" + `load request="{... NumThreads:2 ...}"` + "\n")
	none := log("no load logged\n")
	pinned := &plan.Hardware{Name: "cpu1", Pins: plan.Pins{CPUSet: []int{1}}}
	v1 := &plan.Cell{Backend: &plan.Backend{Kind: "openai"}, Hardware: pinned}
	native := &plan.Cell{Backend: &plan.Backend{Kind: "ollama"}, Hardware: pinned}
	unpinned := &plan.Cell{Backend: &plan.Backend{Kind: "openai"}, Hardware: &plan.Hardware{Name: "box"}}

	got := Oversubscribed(v1, oneThenTwo, "1")
	if !strings.Contains(got, "ran 2 threads on the 1 core(s) it was allowed (1)") || !strings.Contains(got, "the openai protocol cannot set Ollama's num_thread") {
		t.Errorf("v1 cell after a 2-thread load: %q", got)
	}
	if got := Oversubscribed(native, oneThenTwo, "1"); !strings.Contains(got, "ran 2 threads") || strings.Contains(got, "protocol") {
		t.Errorf("native cell after a 2-thread load: %q", got)
	}
	for name, got := range map[string]string{
		"the newest load within the cores": Oversubscribed(v1, twoThenOne, "1"),
		"two threads on two cores":         Oversubscribed(v1, oneThenTwo, "0-1"),
		"unpinned":                         Oversubscribed(unpinned, oneThenTwo, "1"),
		"no count logged":                  Oversubscribed(v1, none, "1"),
		"no log":                           Oversubscribed(v1, filepath.Join(dir, "absent.log"), "1"),
	} {
		if got != "" {
			t.Errorf("%s: %q, want no note", name, got)
		}
	}
}
