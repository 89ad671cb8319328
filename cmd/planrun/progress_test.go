package main

import (
	"bytes"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
)

// An agent loop's task counts once against the level's total, whatever its steps; a
// failed later step counts as a failure.
func TestProgressCountsTasks(t *testing.T) {
	p := newProgress(&bytes.Buffer{}, false, true)
	ok, bad := backends.Sample{}, backends.Sample{Err: &backends.Error{Class: backends.ErrServer}}
	for _, ev := range []executor.Event{
		{Sample: &ok}, // a request of no loop
		{Sample: &ok, Step: 1}, {Sample: &ok, Step: 2}, {Sample: &ok, Step: 3},
		{Sample: &ok, Step: 1}, {Sample: &bad, Step: 2},
	} {
		p.Request(nil, plan.LoadLevel{}, ev)
	}
	if p.done.Load() != 3 || p.failed.Load() != 1 {
		t.Errorf("done %d, failed %d; want 3 and 1", p.done.Load(), p.failed.Load())
	}
}
