package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/planrun/planrun/stats"
)

// percentileTable shows each latency distribution at the report's percentiles (default
// stats.Percentiles) plus its standard deviation, one column per figure and percentile.
func percentileTable(b *strings.Builder, rows []Row, pcts []int) {
	if len(pcts) == 0 {
		pcts = stats.Percentiles
	}
	dists := []struct {
		name, unit string
		scale      float64
		decimals   int
		get        func(*Row) stats.Dist
	}{
		{"TTFT", "s", 1, 3, func(r *Row) stats.Dist { return r.TTFT }},
		{"TPOT", "ms", 1000, 1, func(r *Row) stats.Dist { return r.TPOT }},
		{"ITL", "ms", 1000, 1, func(r *Row) stats.Dist { return r.ITL }},
		{"E2E", "s", 1, 2, func(r *Row) stats.Dist { return r.E2E }},
	}
	head := []string{"Cell", "Conc."}
	for _, d := range dists {
		for _, p := range pcts {
			head = append(head, fmt.Sprintf("%s p%d (%s)", d.name, p, d.unit))
		}
		head = append(head, fmt.Sprintf("%s std (%s)", d.name, d.unit))
	}
	table(b, head, func(add func(...string)) {
		for i := range rows {
			cells := []string{rows[i].CellID, concurrency(rows[i])}
			for _, d := range dists {
				dist := d.get(&rows[i])
				for _, p := range pcts {
					v, _ := dist.At(p)
					cells = append(cells, num(v, d.scale, d.decimals))
				}
				cells = append(cells, num(dist.Std, d.scale, d.decimals))
			}
			add(cells...)
		}
	})
}

// sloTable shows SLO attainment and goodput for the rows whose workload has an slo;
// nothing when none has.
func sloTable(b *strings.Builder, rows []Row) {
	var withSLO []Row
	for _, r := range rows {
		if !math.IsNaN(r.SLOAttainmentPct) {
			withSLO = append(withSLO, r)
		}
	}
	if len(withSLO) == 0 {
		return
	}
	b.WriteString("### SLO\n\nA request is good when it succeeded and met every limit of its workload's `slo` (vLLM's `--goodput` rule; its ITL is its largest gap between content chunks). Attainment = good / all requests; goodput = good requests/s and their output tokens/s (median across runs).\n\n")
	table(b, []string{"Cell", "Conc.", "Attainment (%)", "Goodput (req/s)", "Goodput (tok/s)", "tok/s"}, func(add func(...string)) {
		for _, r := range withSLO {
			add(r.CellID, concurrency(r), num(r.SLOAttainmentPct, 1, 1), num(r.GoodputReqS, 1, 3),
				num(r.GoodputTokS, 1, 1), num(r.OutputTokS, 1, 1))
		}
	})
}

// capacityList shows each cell's capacity search answer; nothing when there was none.
func capacityList(b *strings.Builder, caps []Capacity) {
	if len(caps) == 0 {
		return
	}
	b.WriteString("### Capacity\n\n")
	for _, c := range caps {
		fmt.Fprintf(b, "- `%s`: %s\n", c.CellID, c)
	}
	b.WriteString("\n")
}
