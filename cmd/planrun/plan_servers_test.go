package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
)

// serverSchedule must say what apply's servers.Manager does: reuse across consecutive
// cells of the same server, a serverless cell leaves the running server alone, a
// different server stops the running one first, and the last one stops at the end.
func TestServerSchedule(t *testing.T) {
	a, b := &plan.Server{Spec: servers.Spec{Name: "a"}}, &plan.Server{Spec: servers.Spec{Name: "b"}}
	cell := func(id string, s *plan.Server) *plan.Cell { return &plan.Cell{ID: id, Server: s} }
	tests := []struct {
		name  string
		cells []*plan.Cell
		want  []serverUse
	}{
		{"no servers", []*plan.Cell{cell("1", nil), cell("2", nil)}, nil},
		{"reused", []*plan.Cell{cell("1", a), cell("2", a)},
			[]serverUse{{Server: "a", Start: 1, StopAfter: 2, Cells: 2, IDs: []string{"1", "2"}}}},
		{"serverless cell keeps it running", []*plan.Cell{cell("1", a), cell("2", nil), cell("3", a), cell("4", nil)},
			[]serverUse{{Server: "a", Start: 1, StopAfter: 4, Cells: 2, IDs: []string{"1", "3"}}}},
		{"switch and restart", []*plan.Cell{cell("1", nil), cell("2", a), cell("3", b), cell("4", b), cell("5", a)},
			[]serverUse{
				{Server: "a", Start: 2, StopBefore: 3, Cells: 1, IDs: []string{"2"}},
				{Server: "b", Start: 3, StopBefore: 5, Cells: 2, IDs: []string{"3", "4"}},
				{Server: "a", Start: 5, Restart: true, StopAfter: 5, Cells: 1, IDs: []string{"5"}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serverSchedule(tt.cells); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestPlanShowsServers(t *testing.T) {
	const f = "../../examples/quickstart.hcl"
	code, out, errs := runCmd(t, "", "plan", f)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// One server per CPU set the quickstart pins it to: ollama@cpu1 (three variants),
	// then ollama@cpu2 (one, native and through /v1).
	want := "\nServers (one at a time; consecutive cells that name the same server reuse it):\n" +
		"  server ollama@cpu1: started before cell 1, stopped before cell 4; used by 3 cells\n" +
		"  server ollama@cpu2: started before cell 4, stopped after cell 5 (end of the run); used by 2 cells\n" +
		"\nPlan: 5 cells,"
	if !strings.Contains(out, want) {
		t.Errorf("plan output lacks %q:\n%s", want, out)
	}

	code, out, errs = runCmd(t, "", "plan", "-json", f)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var js struct{ Servers []serverUse }
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Servers) != 2 || js.Servers[0].Server != "ollama@cpu1" || js.Servers[1].Cells != 2 || js.Servers[1].StopAfter != 5 {
		t.Errorf("json servers %+v", js.Servers)
	}
}
