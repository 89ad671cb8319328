package apply

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/stats"
)

// levelSink takes a level's finished requests from the executor's drain goroutine (one
// at a time, off the requests' own goroutines) and hands each record to its consumers in
// turn: the raw JSONL, the measured run's statistics, the model mix's and progress. The
// Sample is then garbage, so memory grows with the statistics' per-request scalars only.
type levelSink struct {
	consumers []func(executor.Event)
	target    stats.Target
	runs      []*stats.Accumulator // per measured run, by index
	firstErr  *backends.Error      // of a measured request
	// models pools the measured requests of each model name of a workload's model mix,
	// over all runs (nil without a mix).
	models map[string]*stats.Accumulator
	// hosts are the hosts of the level's load agents, by index: an agent's records say
	// it sent them (none when this process sent the level).
	hosts []string
	// portLimited counts, by agent (-1: this process), the requests that could not
	// connect for want of a source port (EADDRNOTAVAIL).
	portLimited map[int]int
}

// newLevelSink returns the sink of one level: its records go to log as rec (where the
// level's requests belong) with their Event set, and to progress unless it is nil.
func newLevelSink(log *ledger.RequestLog, rec ledger.RequestRecord, target stats.Target, progress func(executor.Event)) *levelSink {
	s := &levelSink{target: target}
	host := rec.Host
	s.consumers = []func(executor.Event){
		func(ev executor.Event) {
			rec.Event, rec.Host = ev, host
			if a := ev.Agent; a != nil && *a < len(s.hosts) {
				rec.Host = s.hosts[*a]
			}
			log.Write(rec) // a failed write stays failed: the level's Flush reports it
		},
		s.addRun,
		s.addModel,
		s.addPortLimit,
	}
	if progress != nil {
		s.consumers = append(s.consumers, progress)
	}
	return s
}

// add is executor.Options.OnRequest.
func (s *levelSink) add(ev executor.Event) {
	for _, c := range s.consumers {
		c(ev)
	}
}

// measured says whether the request counts in the level's figures.
func measured(ev executor.Event) bool { return !ev.Warmup && !ev.Ramp }

// addRun adds a measured request to its run's statistics.
func (s *levelSink) addRun(ev executor.Event) {
	if !measured(ev) {
		return
	}
	for len(s.runs) <= ev.Run {
		s.runs = append(s.runs, stats.NewAccumulator(s.target))
	}
	s.runs[ev.Run].Add(ev)
	if s.firstErr == nil && ev.Err != nil {
		s.firstErr = ev.Err
	}
}

// addModel pools a measured request of a model mix under its model's name: its sample
// only, as the mix's rows count no turns, shared prefix or pacing.
func (s *levelSink) addModel(ev executor.Event) {
	m := ev.Model
	if !measured(ev) || m == "" {
		return
	}
	if s.models == nil {
		s.models = map[string]*stats.Accumulator{}
	}
	if s.models[m] == nil {
		s.models[m] = stats.NewAccumulator(s.target)
	}
	s.models[m].Add(executor.Event{Sample: ev.Sample})
}

// addPortLimit counts a request that could not connect because its client ran out of
// source ports to the server: one address's ephemeral range, shared by every
// connection to one server address and port.
func (s *levelSink) addPortLimit(ev executor.Event) {
	if ev.Err == nil || !strings.Contains(ev.Err.Message, "cannot assign requested address") {
		return
	}
	k := -1
	if ev.Agent != nil {
		k = *ev.Agent
	}
	if s.portLimited == nil {
		s.portLimited = map[int]int{}
	}
	s.portLimited[k]++
}

// runSummary is measured run i's figures so far (its window's); false before its first
// measured request.
func (s *levelSink) runSummary(i int) (stats.Summary, bool) {
	if i >= len(s.runs) {
		return stats.Summary{}, false
	}
	return s.runs[i].Summary(s.runs[i].Window()), true
}

// portNote says which client ran out of source ports, and how many requests it lost.
func portNote(limited map[int]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(limited)) {
		who := "the client"
		if k >= 0 {
			who = fmt.Sprintf("agent %d", k)
		}
		parts = append(parts, fmt.Sprintf("%s ran out of source ports to the server (%d requests could not connect: cannot assign requested address)", who, limited[k]))
	}
	return strings.Join(parts, "; ") + ": one source address has one range of ephemeral ports to a server's address and port; " +
		"share the load over agents (agents = N), each on its own address (agents { source_addresses })"
}

// statsRuns pairs the measured runs with their statistics.
func (s *levelSink) statsRuns(res executor.Result) []stats.MeasuredRun {
	runs := make([]stats.MeasuredRun, len(res.Runs))
	for i, r := range res.Runs {
		runs[i] = stats.MeasuredRun{Window: stats.Window{Start: r.Start, End: r.End}}
		if i < len(s.runs) {
			runs[i].Acc = s.runs[i]
		}
	}
	return runs
}
