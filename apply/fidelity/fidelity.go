// Package fidelity judges whether a level's load was the load asked: the load it
// delivered against the load asked (a paced level's rate, a closed loop's requests in
// flight), how late its requests went out, and whether the client, not the server, was
// the limit (its self-check, its load agents' shares), as a verdict (ok, short, late,
// client-bound) with the note that says why.
package fidelity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/plan"
)

// askedLoad is the load a level asked for and the load its requests delivered, in one
// unit: requests/s for a paced level (open loop, replay: the schedule's own rate against
// the start stamps'), requests in flight for a closed loop (its slots, or its requests
// when fewer, against the mean in flight while every slot had work, or the most in
// flight when no span had). A request is in flight from its start stamp to its body's
// end, so a server's tail after the last token (a gateway's usage chunk and [DONE]) is
// the server's time, not a shortfall. Both NaN when the load is not judged: a session
// workload's think times keep slots idle on purpose.
type askedLoad struct {
	asked, delivered float64
	unit             string
	// clientShare says a shortfall is the client's own: a closed loop's when its slots'
	// turnaround (one request's body end to the slot's next start) explains it, or
	// when no span held every slot busy (the client's own ramp fell short); a paced
	// level's when its cap on requests in flight never filled, so it had nothing but
	// the client to wait for.
	clientShare bool
	idle        float64 // a closed loop's mean slots idle in turnaround; NaN: not measured
	cap         int     // a paced level's cap on requests in flight; 0: none
}

func loadOfRow(w *plan.Workload, level plan.LoadLevel, row *ledger.Row) askedLoad {
	nan := math.NaN()
	switch {
	case level.RequestRate > 0 || w.Replay != nil:
		l := askedLoad{asked: row.RateScheduled, delivered: row.RateDelivered, unit: "requests/s", cap: level.Concurrency}
		l.clientShare = l.cap == 0 || row.InFlightMax < float64(l.cap)
		return l
	case w.Session != nil:
		return askedLoad{asked: nan, delivered: nan}
	}
	l := askedLoad{asked: float64(min(level.Concurrency, w.RequestsPerRun(level.Concurrency))),
		delivered: row.InFlightHeld, unit: "in flight", idle: row.InFlightIdle, clientShare: true}
	if math.IsNaN(l.delivered) {
		l.delivered = row.InFlightMax
		return l
	}
	// Without the client's turnaround the slots would have been this short: within
	// the tolerance, the turnaround explains the shortfall.
	rest := (l.asked - l.delivered - l.idle) / l.asked
	l.clientShare = !math.IsNaN(l.idle) && rest <= w.FidelityTolerance+1e-9
	return l
}

// Judge is the row's fidelity verdict, from the load it delivered against the
// load asked, from how late it was sent, and from the client's self-check, with the
// note that says why a row is not ok (none when it is, or when nothing was measured to
// judge). The first that holds:
//   - client-bound: the client itself was the limit: it saturated (selfcheck's
//     Saturated), or the delivered load fell short by more than the tolerance and the
//     shortfall was its own (loadOfRow's clientShare);
//   - short: delivered fell short by more than the workload's fidelity tolerance,
//     with a paced level's cap on requests in flight full (the server held it back),
//     or more than a closed loop's slots' turnaround explains;
//   - late: the rate held, but a paced level's send lag p99, or a closed loop's
//     turnaround p99, was above the workload's fidelity_lag_ms (lateOfRow): the
//     timing asked is not the timing the server saw, which a rate cannot show;
//   - ok otherwise.
//
// A shortfall comes first because it is the larger fault: a short level was late too,
// and its note says so.
func Judge(w *plan.Workload, level plan.LoadLevel, row *ledger.Row, c Client) Verdict {
	l := loadOfRow(w, level, row)
	shortfall := math.NaN()
	if l.asked > 0 && !math.IsNaN(l.delivered) {
		shortfall = 1 - l.delivered/l.asked
	}
	f := Verdict{ShortfallPct: shortfall * 100}
	tol := w.FidelityTolerance
	short := shortfall > tol+1e-9
	late := lateOfRow(w, level, row)
	saturated := c.Saturated
	var agentShort string // the agents whose own share fell short for want of their client
	if len(c.AgentsShort) > 0 {
		agentShort = "; client-bound: " + strings.Join(c.AgentsShort, "; ")
	}
	switch {
	case saturated != "":
		f.Verdict, f.Note = ledger.FidelityClientBound, "fidelity client-bound: "+saturated
		if short {
			f.Note += "; " + l.describe(shortfall, tol)
		}
		f.Note += agentShort + late.also()
	case short && l.clientShare:
		f.Verdict = ledger.FidelityClientBound
		f.Note = "fidelity client-bound: " + l.describe(shortfall, tol) + ", and the client, not the server, held it back" + l.capNote() + agentShort + late.also()
	case agentShort != "":
		// The sum held, but a share did not: the level's timing is not the one asked
		// where that agent's requests went.
		f.Verdict = ledger.FidelityClientBound
		f.Note = "fidelity client-bound" + agentShort + " (the level's sum was " + l.describe(shortfall, tol) + ")" + late.also()
	case short:
		f.Verdict, f.Note = ledger.FidelityShort, "fidelity short: "+l.describe(shortfall, tol)+l.capNote()+late.also()
	case late.late:
		f.Verdict, f.Note = ledger.FidelityLate, "fidelity late: "+late.describe()+late.blame(l, row)
	default:
		f.Verdict = ledger.FidelityOK
	}
	return f
}

// Verdict is Judge's verdict on a level (ledger.FidelityOK, ...), how far the load
// delivered fell short of the load asked, and the note that says why a level is not ok.
type Verdict struct {
	Verdict      string
	ShortfallPct float64
	Note         string
}

// Client is what the client's own self-checks said of a level: why its client
// saturated ("" when it did not), or, for a level its load agents sent, why theirs
// did, each named, and which agents' own shares fell short for want of their client
// (Agents).
type Client struct {
	Saturated   string
	AgentsShort []string
}

// lateness is how late a level's requests went out: a paced level's send lag, or a
// closed loop's turnaround between one request's body end and its slot's next start,
// at p99 against the workload's fidelity_lag_ms.
type lateness struct {
	what     string  // "send lag" or "turnaround"
	p99, max float64 // seconds
	limit    time.Duration
	late     bool
}

// lateOfRow measures the row's lateness; late is false where nothing was measured, and
// for a session workload, whose think times keep slots idle on purpose.
func lateOfRow(w *plan.Workload, level plan.LoadLevel, row *ledger.Row) lateness {
	l := lateness{limit: w.FidelityLag}
	d := row.Turnaround
	l.what = "turnaround"
	switch {
	case level.RequestRate > 0 || w.Replay != nil:
		d, l.what = row.SendLag, "send lag"
	case w.Session != nil:
		return l
	}
	if d.N == 0 || math.IsNaN(d.P99) {
		return l
	}
	l.p99, l.max = d.P99, d.Max
	l.late = l.limit > 0 && d.P99 > l.limit.Seconds()
	if l.what == "turnaround" && !math.IsNaN(row.E2E.P50) {
		// A slot's stall distorts a closed loop's figures by its share of a request's
		// time: 2.4 ms between requests of 400 ms is 0.6%, and every quiet row of the
		// quickstart and compare-engines had 1-5 ms. So the stall must also exceed the
		// load's tolerance of the median request (fidelity_tolerance_pct of E2E p50).
		l.late = l.late && d.P99 > w.FidelityTolerance*row.E2E.P50
	}
	return l
}

// describe says the figures, e.g. "send lag p99 27.4 ms (max 90.2 ms) above
// fidelity_lag_ms 1".
func (l lateness) describe() string {
	return fmt.Sprintf("%s p99 %s ms (max %s ms) above fidelity_lag_ms %s", l.what, Millis(l.p99), Millis(l.max),
		strconv.FormatFloat(float64(l.limit)/float64(time.Millisecond), 'g', 4, 64))
}

// also is a short or client-bound note's mention of lateness: "" when the level was
// on time.
func (l lateness) also() string {
	if !l.late {
		return ""
	}
	return "; and late: " + l.describe()
}

// blame says what a late level's figures tell about the cause: a paced level whose cap
// filled waited on the server for some sends; otherwise the client sent late.
func (l lateness) blame(load askedLoad, row *ledger.Row) string {
	switch {
	case l.what == "turnaround":
		return ": its slots stood in the client between requests (building the next one, waiting for a core), so the server saw gaps the load did not ask for"
	case load.cap > 0 && row.InFlightMax >= float64(load.cap):
		return fmt.Sprintf(": its cap of %d in flight filled at times, so some sends waited on the server; the arrivals the server saw are not the schedule's", load.cap)
	}
	return ": the client sent behind the schedule (its cap on requests in flight never filled), so the arrivals the server saw are not the schedule's (a trace's bursts spread or reordered)"
}

// Millis writes seconds as milliseconds to a tenth, or to 3 significant digits below 1 ms.
func Millis(s float64) string {
	v := s * 1000
	if v < 1 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// describe says the delivered load against the asked one, e.g. "delivered 95.1
// requests/s against 150 asked (36.6% short, tolerance 5%)".
func (l askedLoad) describe(shortfall, tol float64) string {
	return fmt.Sprintf("delivered %s %s against %s asked (%.1f%% short, tolerance %s%%)", fig(l.delivered), l.unit,
		fig(l.asked), shortfall*100, strconv.FormatFloat(tol*100, 'g', 4, 64))
}

func (l askedLoad) capNote() string {
	switch {
	case l.unit == "in flight" && math.IsNaN(l.idle):
		return ""
	case l.unit == "in flight" && l.clientShare:
		return fmt.Sprintf(" (its slots stood idle between requests: %s of %s, the client's own turnaround)", fig(l.idle), fig(l.asked))
	case l.unit == "in flight":
		return fmt.Sprintf(" (its slots' own turnaround between requests, %s of %s, does not explain it)", fig(l.idle), fig(l.asked))
	case l.cap == 0:
		return " (no cap on requests in flight)"
	case l.clientShare:
		return fmt.Sprintf(" (its cap of %d in flight never filled)", l.cap)
	}
	return fmt.Sprintf(" (its cap of %d in flight was full: the server, not the client, held requests back)", l.cap)
}

// fig writes a load to a tenth, without trailing zeros.
func fig(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// MeanTPOT is the row's mean TPOT, 0 when it has none (selfcheck then skips its TPOT rules).
func MeanTPOT(row ledger.Row) time.Duration {
	if math.IsNaN(row.TPOT.Mean) {
		return 0
	}
	return time.Duration(row.TPOT.Mean * float64(time.Second))
}

// Agents names the agents whose own share was client-bound: their client
// saturated (selfcheck), or their share of the load fell short by more than the
// tolerance while their own cap or slots had room (the client's own shortfall, as
// Judge reads a whole level's): the Client of a level that count agents sent.
func Agents(w *plan.Workload, level plan.LoadLevel, count int, agents []fleet.AgentLevel, meanTPOT time.Duration) Client {
	var saturated, short []string
	for _, al := range agents {
		name := fmt.Sprintf("agent %d (%s)", al.Index, al.Where)
		if al.Client != nil {
			if why := al.Client.Saturated(meanTPOT); why != "" {
				saturated = append(saturated, name+": "+why)
			}
		}
		if note := shareShortfall(w, level, count, al); note != "" {
			short = append(short, name+" "+note)
		}
	}
	return Client{Saturated: strings.Join(saturated, "; "), AgentsShort: short}
}

// shareShortfall is the note of an agent whose share of the load fell short by more
// than the tolerance for want of its own client ("" otherwise): a paced share whose
// rate fell short while its cap never filled, or a closed loop's share whose slots
// stood idle in the client.
func shareShortfall(w *plan.Workload, level plan.LoadLevel, n int, al fleet.AgentLevel) string {
	if len(al.Loads) == 0 || w.Session != nil {
		return ""
	}
	mean := func(f func(fleet.Load) float64) float64 {
		var vs []float64
		for _, l := range al.Loads {
			if v := f(l); !math.IsNaN(v) {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			return math.NaN()
		}
		s := 0.0
		for _, v := range vs {
			s += v
		}
		return s / float64(len(vs))
	}
	slots := executor.Share{Index: al.Index, Of: n}.Slots(level.Concurrency)
	var asked, got float64
	var unit string
	ownFault := false
	if level.RequestRate > 0 || w.Replay != nil {
		asked, got, unit = mean(func(l fleet.Load) float64 { return l.RateScheduled }), mean(func(l fleet.Load) float64 { return l.RateDelivered }), "requests/s"
		ownFault = slots == 0 || slices.MaxFunc(al.Loads, func(a, b fleet.Load) int { return int(a.InFlightMax - b.InFlightMax) }).InFlightMax < float64(slots)
	} else {
		asked, got, unit = float64(slots), mean(func(l fleet.Load) float64 { return l.InFlightHeld }), "in flight"
		idle := mean(func(l fleet.Load) float64 { return l.IdleHeld })
		ownFault = !math.IsNaN(idle) && (asked-got-idle)/asked <= w.FidelityTolerance+1e-9
	}
	if !(asked > 0) || math.IsNaN(got) {
		return ""
	}
	shortfall := 1 - got/asked
	if shortfall <= w.FidelityTolerance+1e-9 || !ownFault {
		return ""
	}
	return fmt.Sprintf("delivered %s %s of its share's %s (%.1f%% short)", fig(got), unit, fig(asked), shortfall*100)
}
