package selfbench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// header names the columns Write prints, in order.
var header = []string{"streams", "requests", "tok/s", "of ideal", "cpu s/1k tok",
	"TTFT err p50", "TTFT err p99", "TPOT err p50", "TPOT err p99", "in tol", "TTFT out late/early",
	"send p50/p99", "client write p50/p99", "to handler p50/p99", "new conns", "conn setup p50/max", "server late p50/max p99",
	"client GC n/cpu/assist", "allocs/tok", "client sched lag p99", "client procs", "kept up"}

func row(l LevelReport) []string {
	ideal := "-"
	if l.IdealTokensPerSec > 0 {
		ideal = fmt.Sprintf("%.0f%%", 100*l.TokensPerSec/l.IdealTokensPerSec)
	}
	kept := "yes"
	if !l.KeptUp() {
		kept = "NO"
		if l.Failed > 0 {
			kept += fmt.Sprintf(" (%d failed)", l.Failed)
		}
	}
	return []string{
		fmt.Sprint(l.Streams), fmt.Sprint(l.Requests), fmt.Sprintf("%.0f", l.TokensPerSec), ideal,
		fmt.Sprintf("%.4f", l.CPUPer1kTokens.Seconds()),
		fmt.Sprintf("%s (%+.2f%%)", us(l.TTFT.P50), l.TTFT.P50Pct), fmt.Sprintf("%s (%.2f%%)", us(l.TTFT.P99), l.TTFT.P99Pct),
		fmt.Sprintf("%s (%+.2f%%)", us(l.TPOT.P50), l.TPOT.P50Pct), fmt.Sprintf("%s (%.2f%%)", us(l.TPOT.P99), l.TPOT.P99Pct),
		fmt.Sprintf("%.1f%%/%.1f%%", 100*l.TTFT.Within, 100*l.TPOT.Within),
		fmt.Sprintf("%d/%d", l.TTFTLate, l.TTFTEarly),
		us(l.SendP50) + "/" + us(l.SendP99), us(l.WriteP50) + "/" + us(l.WriteP99), us(l.HandlerP50) + "/" + us(l.HandlerP99),
		fmt.Sprint(l.NewConnections), us(l.ConnectP50) + "/" + us(l.ConnectMax),
		us(l.ServerLateP50) + "/" + us(l.ServerLateMaxP99),
		fmt.Sprintf("%d/%s/%s", l.GCCycles, ms(l.GCCPU), ms(l.AssistCPU)), fmt.Sprintf("%.2f", l.AllocsPerToken),
		us(l.SchedLagP99), fmt.Sprint(l.Procs), kept,
	}
}

// us prints a duration in microseconds, the scale of every error here.
func us(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond)) }

// ms prints a duration in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

// Legend explains the columns, printed under the table.
func Legend(inProcess bool) string {
	cpu := "cpu s/1k tok: this process's CPU seconds (getrusage) per 1,000 streamed tokens: the client alone"
	if inProcess {
		cpu = "cpu s/1k tok: this process's CPU seconds (getrusage) per 1,000 streamed tokens: client AND mock server (in-process)"
	}
	return strings.Join([]string{
		"err = client-measured − server-emitted, per request: TTFT truth = first chunk written (server) − request start (client),",
		"so its error is how late the client stamped the chunk; TPOT truth = the server's (last − first write)/(tokens − 1).",
		"p50 signed, p99 of the absolute error; in tol: share of requests within max(2%, 0.5 ms) for TTFT/TPOT.",
		"send: request start (client) to receipt (server): the client's writing plus the server's accepting, inside every TTFT;",
		"TTFT out late/early: TTFTs outside tolerance, late (the client's: its reader was not reading when the first chunk came,",
		"and the read that took it took the chunks queued meanwhile under one receive stamp, the newest's) / early (the mock's: its write stamp was late).",
		"client write: send's client part (pre_send), request start to fully written less set-up (send_delay); to handler: the rest,",
		"fully written to the mock's handler entered (kernel delivery and the mock's accepting); new conns: requests that dialled,",
		"conn setup: their connection time (dial), inside their send.",
		"client GC: the client's collections during the run / their CPU / its allocation assists; allocs/tok: its heap allocations per token;",
		"client sched lag p99: how long its goroutines waited, runnable, to run (runtime/metrics); client procs: its GOMAXPROCS during the run.",
		"server late: how late the mock wrote chunks against its own schedule (median of request medians / p99 of request maxima).",
		cpu + " (with load agents: every agent's CPU and the lead's, which merges their records).",
		"kept up: no failures and 99% of TTFTs and TPOTs within tolerance.",
	}, "\n")
}

// Write prints levels as an aligned table, or as a Markdown table when markdown is set.
// Levels sent by load agents get an agents column first.
func Write(w io.Writer, levels []LevelReport, markdown bool) error {
	head, cells := header, row
	for _, l := range levels {
		if l.Agents > 1 {
			head = append([]string{"agents"}, header...)
			cells = func(l LevelReport) []string { return append([]string{fmt.Sprint(l.Agents)}, row(l)...) }
			break
		}
	}
	if markdown {
		var b strings.Builder
		b.WriteString("| " + strings.Join(head, " | ") + " |\n")
		b.WriteString("|" + strings.Repeat("---|", len(head)) + "\n")
		for _, l := range levels {
			b.WriteString("| " + strings.Join(cells(l), " | ") + " |\n")
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, l := range levels {
		fmt.Fprintln(tw, strings.Join(cells(l), "\t"))
	}
	return tw.Flush()
}
