package plan

import (
	"testing"

	"github.com/zclconf/go-cty/cty"
)

func TestWorkloadLevelsAndGoal(t *testing.T) {
	p, diags := LoadFiles("/plans", map[string][]byte{"p.hcl": []byte(`
variable "goal_s" { default = 0.5 }
workload "sweep" {
  concurrency  = [1, 8]
  request_rate = [2, 4.5]
  goal         = result.ttft_p90_s < var.goal_s && result.error_rate == 0
}
workload "closed" {
  concurrency = [1, 4]
}
workload "one_rate" {
  request_rate = 3
}
`)}, LoadOptions{Getenv: func(string) string { return "" }})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	byName := map[string]*Workload{}
	for _, w := range p.Workloads {
		byName[w.Name] = w
	}
	got := byName["sweep"].Levels()
	want := []LoadLevel{{Concurrency: 1, RequestRate: 2}, {Concurrency: 1, RequestRate: 4.5}, {Concurrency: 8, RequestRate: 2}, {Concurrency: 8, RequestRate: 4.5}}
	if len(got) != len(want) {
		t.Fatalf("levels %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("levels %v, want %v", got, want)
		}
	}
	if l := byName["closed"].Levels(); len(l) != 2 || l[1] != (LoadLevel{Concurrency: 4}) {
		t.Fatalf("closed-loop levels %v", l)
	}
	if l := byName["one_rate"].Levels(); len(l) != 1 || l[0] != (LoadLevel{Concurrency: 1, RequestRate: 3}) {
		t.Fatalf("one rate: %v", l)
	}

	w := byName["sweep"]
	for _, c := range []struct {
		ttft, errRate float64
		want          bool
	}{{0.2, 0, true}, {0.7, 0, false}, {0.2, 0.1, false}} {
		ok, diags := w.MeetsGoal(map[string]cty.Value{"ttft_p90_s": cty.NumberFloatVal(c.ttft), "error_rate": cty.NumberFloatVal(c.errRate)})
		if diags.HasErrors() || ok != c.want {
			t.Fatalf("goal at ttft %v, errors %v: %v %v, want %v", c.ttft, c.errRate, ok, diags, c.want)
		}
	}
	if ok, _ := byName["closed"].MeetsGoal(nil); !ok {
		t.Fatal("a workload without a goal meets it")
	}
}

// A level is named as the terminal and notes show it; concurrency 0 is only a trace
// replay's level without a cap.
func TestLoadLevelString(t *testing.T) {
	for l, want := range map[LoadLevel]string{{Concurrency: 4}: "c=4", {Concurrency: 4, RequestRate: 2.5}: "c=4 rate=2.5/s", {}: "replay"} {
		if got := l.String(); got != want {
			t.Errorf("%#v: %q, want %q", l, got, want)
		}
	}
}

// A replay's level reads as a replay in the terminal, capped or not; other workloads'
// levels read as LoadLevel.String.
func TestLevelName(t *testing.T) {
	replay, closed := &Workload{Replay: &Replay{Speedup: 1}}, &Workload{}
	for _, c := range []struct {
		w    *Workload
		l    LoadLevel
		want string
	}{
		{replay, LoadLevel{}, "replay"},
		{replay, LoadLevel{Concurrency: 8}, "replay ≤8 in flight"},
		{closed, LoadLevel{Concurrency: 8}, "c=8"},
		{closed, LoadLevel{Concurrency: 8, RequestRate: 2}, "c=8 rate=2/s"},
	} {
		if got := c.w.LevelName(c.l); got != c.want {
			t.Errorf("%#v: %q, want %q", c.l, got, c.want)
		}
	}
}
