package plan

import (
	"fmt"
	"testing"
	"time"

	"github.com/planrun/planrun/stats"
)

func TestSLOAndCapacityDecoded(t *testing.T) {
	p, diags := Load("testdata/valid-files/slo.hcl", LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ws := map[string]*Workload{}
	for _, w := range p.Workloads {
		ws[w.Name] = w
	}
	chat, open := ws["chat"], ws["open"]
	want := stats.SLO{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond, ITL: 200 * time.Millisecond, E2E: 10 * time.Second}
	if chat.SLO != want {
		t.Errorf("chat slo = %+v, want %+v", chat.SLO, want)
	}
	if c := chat.Capacity; c == nil || c.TargetPct != 95 || c.Resolution != 1 || chat.CapacityDimension() != "concurrency" {
		t.Errorf("chat capacity = %+v (%s), want 95%% by concurrency to 1", c, chat.CapacityDimension())
	}
	if c := open.Capacity; c == nil || c.TargetPct != 90 || c.Resolution != 0.25 || open.CapacityDimension() != "request_rate" {
		t.Errorf("open capacity = %+v (%s), want 90%% by request_rate to 0.25", c, open.CapacityDimension())
	}
	if o := p.Outputs[0]; fmt.Sprint(o.Percentiles) != "[50 95 99]" {
		t.Errorf("markdown percentiles = %v, want [50 95 99]", o.Percentiles)
	}
	if g := ws["goal"]; g.Capacity != nil || g.SLO != (stats.SLO{E2E: 2 * time.Second}) {
		t.Errorf("goal workload: capacity %+v slo %+v", g.Capacity, g.SLO)
	}
}

func TestCapacityBetween(t *testing.T) {
	c := &Capacity{TargetPct: 95, Resolution: 1}
	tests := []struct {
		name        string
		met, missed LoadLevel
		byRate      bool
		next        LoadLevel
		more        bool
	}{
		{"midpoint", LoadLevel{Concurrency: 4}, LoadLevel{Concurrency: 16}, false, LoadLevel{Concurrency: 10}, true},
		{"odd gap rounds down", LoadLevel{Concurrency: 4}, LoadLevel{Concurrency: 7}, false, LoadLevel{Concurrency: 5}, true},
		{"adjacent: done", LoadLevel{Concurrency: 5}, LoadLevel{Concurrency: 6}, false, LoadLevel{}, false},
		{"rate midpoint", LoadLevel{Concurrency: 8, RequestRate: 2}, LoadLevel{Concurrency: 8, RequestRate: 8}, true, LoadLevel{Concurrency: 8, RequestRate: 5}, true},
		{"rate within resolution", LoadLevel{Concurrency: 8, RequestRate: 2}, LoadLevel{Concurrency: 8, RequestRate: 3}, true, LoadLevel{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, more := c.Between(tt.met, tt.missed, tt.byRate)
			if next != tt.next || more != tt.more {
				t.Errorf("Between(%+v, %+v) = %+v, %v; want %+v, %v", tt.met, tt.missed, next, more, tt.next, tt.more)
			}
		})
	}
}
