package apply

import (
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/executor"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/stats"
)

// levelSink takes a level's finished requests from the executor's drain goroutine (one
// at a time, off the requests' own goroutines): it appends each to the raw JSONL, adds
// measured ones to their run's statistics and tells progress. The Sample is then
// garbage, so memory grows with the statistics' per-request scalars only.
type levelSink struct {
	log      *ledger.RequestLog
	rec      ledger.RequestRecord // where the level's records belong; Sample set per record
	target   stats.Target
	progress func(executor.Event) // nil: none
	runs     []*stats.Accumulator // per measured run, by index
	firstErr *backends.Error      // of a measured request
	// models pools the measured requests of each model name of a workload's model mix,
	// over all runs (nil without a mix).
	models map[string]*stats.Accumulator
}

// add is executor.Options.OnRequest.
func (s *levelSink) add(ev executor.Event) {
	rec := s.rec
	rec.Run, rec.Warmup, rec.Ramp, rec.Sample = ev.Run, ev.Warmup, ev.Ramp, *ev.Sample
	rec.Session, rec.Turn = ev.Session, ev.Turn
	rec.SharedPrefixTokens = ev.SharedPrefixTokens
	if ev.Paced {
		at, lag := int64(ev.Scheduled), int64(ev.SendLag)
		rec.ScheduledNS, rec.SendLagNS = &at, &lag
	}
	// A failed write stays failed: the level's Flush reports it.
	s.log.Write(rec)
	if !ev.Warmup && !ev.Ramp {
		for len(s.runs) <= ev.Run {
			s.runs = append(s.runs, stats.NewAccumulator(s.target))
		}
		acc := s.runs[ev.Run]
		acc.Add(ev.Sample)
		if ev.Turn > 0 {
			acc.AddTurn(ev.Session, ev.Turn, ev.Sample)
		}
		acc.AddSharedPrefix(ev.Sample, ev.SharedPrefixTokens)
		if m := ev.Sample.Model; m != "" {
			if s.models == nil {
				s.models = map[string]*stats.Accumulator{}
			}
			if s.models[m] == nil {
				s.models[m] = stats.NewAccumulator(s.target)
			}
			s.models[m].Add(ev.Sample)
		}
		if ev.Paced {
			acc.AddSendLag(ev.SendLag)
			acc.AddPaced(ev.Scheduled, ev.Sample)
		}
		if s.firstErr == nil && ev.Sample.Err != nil {
			s.firstErr = ev.Sample.Err
		}
	}
	if s.progress != nil {
		s.progress(ev)
	}
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
