package compare

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/planrun/planrun/internal/suggest"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/stats"
)

// Threshold is one -fail-on condition of `compare` used as a gate: a figure (a
// CompareFields name), > or <, and a signed limit on its change from A to B, in percent
// (Δ%) or in the figure's own unit (B − A). "ttft_p99_s>+10%" fails a row whose TTFT p99
// rose by more than 10%; "output_tok_s<-5%" one whose throughput fell by more than 5%.
type Threshold struct {
	Field   string
	Op      byte    // '>' or '<'
	Limit   float64 // signed
	Percent bool
	Text    string // as given
}

// ThresholdGrammar is how a threshold is written, for error messages and help.
const ThresholdGrammar = "<figure><op><signed change>, e.g. 'ttft_p99_s>+10%' (Δ% above +10) or " +
	"'output_tok_s<-5%' (Δ% below -5) or 'e2e_p99_s>+0.5' (B − A above 0.5 s)"

// ParseThreshold reads a threshold; the error says what is wrong and, for a figure
// name it does not know, which one was meant.
func ParseThreshold(s string) (Threshold, error) {
	t := Threshold{Text: s}
	i := strings.IndexAny(s, "<>")
	if i < 0 {
		return t, fmt.Errorf("-fail-on %q has no > or <; write %s", s, ThresholdGrammar)
	}
	t.Field, t.Op = strings.TrimSpace(s[:i]), s[i]
	if err := CheckCompareField(t.Field); err != nil {
		return t, fmt.Errorf("-fail-on %q: %v", s, err)
	}
	limit := strings.TrimSpace(s[i+1:])
	if limit == "" || (limit[0] != '+' && limit[0] != '-') {
		return t, fmt.Errorf("-fail-on %q: the change needs its sign (+ for a rise, - for a fall), "+
			"because it is a change from A to B, not a value: write %s", s, ThresholdGrammar)
	}
	if t.Percent = strings.HasSuffix(limit, "%"); t.Percent {
		limit = strings.TrimSuffix(limit, "%")
	}
	v, err := strconv.ParseFloat(limit, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return t, fmt.Errorf("-fail-on %q: %q is not a number; write %s", s, limit, ThresholdGrammar)
	}
	t.Limit = v
	return t, nil
}

// CheckCompareField says, for a name that is not a CompareFields figure, which one was
// meant and which there are.
func CheckCompareField(name string) error {
	var names []string
	for _, f := range CompareFields {
		if f.Name == name {
			return nil
		}
		names = append(names, f.Name)
	}
	return fmt.Errorf("no figure %q.%s Figures: %s", name, suggest.DidYouMean(name, names), strings.Join(names, ", "))
}

// Crossed reports whether c crosses t, and the change it measured (Δ% or B − A). A
// figure missing on either side crosses nothing. history's rolling baseline uses it with
// the baseline's median as A.
func (t Threshold) Crossed(c Change) (float64, bool) {
	v := c.B - c.A
	if t.Percent {
		v = c.Pct
	}
	if math.IsNaN(v) {
		return v, false
	}
	if t.Op == '>' {
		return v, v > t.Limit
	}
	return v, v < t.Limit
}

// Breach is a row and figure that crossed a threshold, or that A measured and B's row
// could not (every request failed): a gate must not pass a run that measured nothing.
type Breach struct {
	Row       string // Delta.Name
	Threshold Threshold
	Change    Change
	By        float64 // the measured Δ% or B − A; NaN when B did not measure the figure
	// Inconclusive is set when the rows hold fewer successful requests (Have, the smaller
	// side) than the figure needs (Need, see RequestsToConclude): the crossing is within
	// what reruns of the same server show, so a gate reports it without failing.
	Inconclusive bool
	Have, Need   int
	// JudgedOn names the lower percentile of the same figure the crossing was judged on
	// when the rows cannot resolve the one the threshold names; "" when it was not needed.
	JudgedOn string
	// Verdict is Fail or Indeterminate where both rows have intervals (then Inconclusive
	// is Indeterminate), and Lo, Hi are the change's interval at Confidence (Δ% or B − A,
	// as the threshold is written; infinite where a side cannot bound it). Without
	// intervals (an older ledger) Verdict is "" and the point change was judged.
	Verdict    Verdict
	Lo, Hi     float64
	Confidence float64
	// NeedUnit is what Need counts: "requests" a side, or "runs" for a rate across runs.
	NeedUnit string
	// Unsettled names a side whose row is unstable or contended ("B contended 45%"):
	// its verdict stands, and its line says the change may be the machine's.
	Unsettled string
}

var percentileName = regexp.MustCompile(`_p(\d+)_`)

// RequestsToConclude is the fewest successful requests a side for a change in the
// figure to be judged, at the default confidence: RequestsToConcludeAt.
func RequestsToConclude(field string) int {
	return RequestsToConcludeAt(field, stats.DefaultConfidence)
}

// RequestsToConcludeAt is the one rule every gate, the history and the rows' notes hold
// a figure to: MinConclusiveRequests, and for a percentile pq the fewest requests whose
// order statistics bound it on both sides at conf (stats.RequestsToBound: at 95%, p90
// 36, p95 73, p99 368).
func RequestsToConcludeAt(field string, conf float64) int {
	need := MinConclusiveRequests
	if m := percentileName.FindStringSubmatch(field); m != nil {
		if q, err := strconv.Atoi(m[1]); err == nil && q > 0 && q < 100 {
			need = max(need, stats.RequestsToBound(float64(q)/100, conf))
		}
	}
	return need
}

func (b Breach) String() string { return b.text() + unsettledSuffix(b.Unsettled) }

func (b Breach) text() string {
	if math.IsNaN(b.Change.B) {
		return fmt.Sprintf("%s: %s was %s in A and not measured in B (%s)", b.Row, b.Threshold.Field,
			strconv.FormatFloat(b.Change.A, 'g', 4, 64), b.Threshold.Text)
	}
	got := fmt.Sprintf("%+.1f%%", b.By)
	if !b.Threshold.Percent {
		got = fmt.Sprintf("%+g", b.By)
	}
	s := fmt.Sprintf("%s: %s %s → %s (%s) crossed %s", b.Row, cmp.Or(b.JudgedOn, b.Threshold.Field),
		strconv.FormatFloat(b.Change.A, 'g', 4, 64), strconv.FormatFloat(b.Change.B, 'g', 4, 64), got, b.Threshold.Text)
	if b.JudgedOn != "" {
		s += fmt.Sprintf(", judged on %s: %d successful requests a side cannot resolve %s (it needs %d)",
			b.JudgedOn, b.Have, b.Threshold.Field, b.Need)
	}
	if b.Verdict != "" {
		return b.intervalString()
	}
	if b.Inconclusive {
		s += fmt.Sprintf(", but inconclusive: %s needs %d successful requests a side, the rows have %d", b.Threshold.Field, b.Need, b.Have)
	}
	return s
}

// intervalString is String for a verdict judged on intervals.
func (b Breach) intervalString() string {
	f := func(v float64) string {
		switch {
		case math.IsInf(v, 0):
			return "unbounded"
		case b.Threshold.Percent:
			return fmt.Sprintf("%+.1f%%", v)
		}
		return fmt.Sprintf("%+.4g", v)
	}
	fig := cmp.Or(b.JudgedOn, b.Threshold.Field)
	s := fmt.Sprintf("%s: %s %s → %s (%s, %g%% interval %s to %s)", b.Row, fig,
		strconv.FormatFloat(b.Change.A, 'g', 4, 64), strconv.FormatFloat(b.Change.B, 'g', 4, 64), f(b.By),
		100*b.Confidence, f(b.Lo), f(b.Hi))
	if b.JudgedOn != "" {
		s += fmt.Sprintf(" [judged on %s: %d successful requests a side cannot bound %s]", b.JudgedOn, b.Have, b.Threshold.Field)
	}
	if b.Verdict == Fail {
		return s + " crossed " + b.Threshold.Text
	}
	s += " straddles " + b.Threshold.Text + ": indeterminate"
	switch {
	case b.Need > 0:
		s += fmt.Sprintf("; about %d %s a side would resolve it (the rows have %d)", b.Need, b.NeedUnit, b.Have)
	default:
		s += "; the change sits on the limit, so no count resolves it"
	}
	return s
}

// Gate holds every matched row against every threshold and returns the fails and the
// indeterminate answers, row by row. Where both rows have intervals, the verdict is on
// the interval of the change (ChangeInterval): a change whose interval lies within the
// threshold passes and is not returned. Rows without them (an older ledger) are judged
// on the point change, a crossing on rows too small for the figure marked Inconclusive.
// Rows on one side only cross nothing (Compare's notes name them), nor do two sides
// that are one measurement (Judge counts them: a gate over them judged nothing); a
// figure A measured and B's row did not is a fail.
func Gate(deltas []Delta, ts []Threshold) []Breach {
	var out []Breach
	for _, d := range deltas {
		if d.A == nil || d.B == nil || SameMeasurement(d.A, d.B) {
			continue
		}
		have := min(d.A.Succeeded, d.B.Succeeded)
		for _, t := range ts {
			if b, ok := gateIntervals(d, t, have); ok {
				b.Unsettled = unsettledOf(d)
				if b.Verdict != Pass {
					out = append(out, b)
				}
				continue
			}
			on := JudgedOn(t.Field, have)
			c, _ := d.Figure(cmp.Or(on, t.Field))
			lost := !math.IsNaN(c.A) && math.IsNaN(c.B)
			if by, ok := t.Crossed(c); ok || lost {
				b := Breach{Row: d.Name(), Threshold: t, Change: c, By: by, Have: have, Need: RequestsToConclude(t.Field), NeedUnit: "requests",
					Lo: math.NaN(), Hi: math.NaN()}
				b.Inconclusive = !lost && on == ""
				b.Unsettled = unsettledOf(d)
				if on != t.Field {
					b.JudgedOn = on
				}
				out = append(out, b)
			}
		}
	}
	return out
}

// gateIntervals judges t on d's intervals; ok is false when a row has none. The figure
// judged is the threshold's own when both rows bound it, else its highest lower
// percentile both bound (a p99 from 40 requests is judged on its p90), else its own,
// unbounded, which can still fail on one side but never pass.
func gateIntervals(d Delta, t Threshold, have int) (Breach, bool) {
	field := t.Field
	ia, ib, conf, ok := intervalsOf(field, d.A, d.B)
	if !ok {
		return Breach{}, false
	}
	b := Breach{Row: d.Name(), Threshold: t, Have: have, Confidence: conf}
	if !ia.Bounded() || !ib.Bounded() {
		if name, la, lb, lc, ok := boundedLower(field, d); ok {
			field, ia, ib, conf, b.JudgedOn, b.Confidence = name, la, lb, lc, name, lc
		}
	}
	c, _ := d.Figure(field)
	b.Change = c
	b.By, _ = t.Crossed(c)
	if !math.IsNaN(c.A) && math.IsNaN(c.B) { // B lost a figure A measured
		b.Verdict, b.By, b.Lo, b.Hi = Fail, math.NaN(), math.NaN(), math.NaN()
		return b, true
	}
	if math.IsNaN(c.A) || math.IsNaN(b.By) {
		b.Verdict = Pass // nothing to judge: A did not measure it
		return b, true
	}
	b.Lo, b.Hi = ChangeInterval(c.A, c.B, ia, ib, t.Percent)
	b.Verdict = judge(t, b.Lo, b.Hi)
	b.Inconclusive = b.Verdict == Indeterminate
	b.setNeed(d, have, conf)
	return b, true
}

// boundedLower is the highest percentile below field's that both of d's rows bound,
// with its intervals; ok is false when field is no percentile or none is bounded.
func boundedLower(field string, d Delta) (name string, ia, ib stats.Interval, conf float64, ok bool) {
	m := percentileName.FindStringSubmatchIndex(field)
	if m == nil {
		return "", ia, ib, 0, false
	}
	q, _ := strconv.Atoi(field[m[2]:m[3]])
	for _, lower := range []int{95, 90, 50} {
		name := field[:m[2]] + strconv.Itoa(lower) + field[m[3]:]
		la, lb, lc, ok := intervalsOf(name, d.A, d.B)
		if lower < q && ok && la.Bounded() && lb.Bounded() {
			return name, la, lb, lc, true
		}
	}
	return "", ia, ib, 0, false
}

// setNeed records what b was judged on (requests a side, or runs for a figure of runs)
// and, when it is indeterminate, how many would resolve it.
func (b *Breach) setNeed(d Delta, have int, conf float64) {
	bound, unit := boundFor(b.Threshold.Field, conf)
	n := have
	if unit == "runs" {
		n = min(d.A.Runs, d.B.Runs)
	}
	b.NeedUnit, b.Have = unit, n
	if b.Verdict == Indeterminate {
		b.Need = requestsToResolve(b.Threshold, b.By, b.Lo, b.Hi, n, bound, conf)
		if b.JudgedOn != "" { // resolving the threshold's own figure takes bounding it first
			b.Need = max(b.Need, bound)
		}
	}
}

// JudgedOn is the figure a threshold on field is judged on with have requests a side:
// field itself when they resolve it, else the same figure's highest lower percentile
// they do resolve (a p99 on 40 requests is judged on the p95), else "".
func JudgedOn(field string, have int) string {
	if have >= RequestsToConclude(field) {
		return field
	}
	m := percentileName.FindStringSubmatchIndex(field)
	if m == nil {
		return ""
	}
	q, _ := strconv.Atoi(field[m[2]:m[3]])
	for _, lower := range []int{95, 90, 50} {
		name := field[:m[2]] + strconv.Itoa(lower) + field[m[3]:]
		if lower < q && CheckCompareField(name) == nil && have >= RequestsToConclude(name) {
			return name
		}
	}
	return ""
}

// Failing are the breaches that fail a gate: the conclusive ones, or all with strict.
func Failing(breaches []Breach, strict bool) []Breach {
	var out []Breach
	for _, b := range breaches {
		if strict || !b.Inconclusive {
			out = append(out, b)
		}
	}
	return out
}

// WriteBreachesMarkdown lists the gate's breaches under a comparison in Markdown (for a
// PR comment); nothing when there are none.
func WriteBreachesMarkdown(w io.Writer, breaches []Breach) error {
	if len(breaches) == 0 {
		return nil
	}
	var b strings.Builder
	if n := len(Failing(breaches, false)); n > 0 {
		fmt.Fprintf(&b, "\n**Gate failed**: %d threshold crossing(s).\n\n", n)
	} else {
		fmt.Fprintf(&b, "\n**Gate indeterminate**: %d answer(s) the rows cannot settle (the change's interval straddles the limit, or too few requests).\n\n", len(breaches))
	}
	for _, br := range breaches {
		b.WriteString("- " + strings.ReplaceAll(br.String(), "|", `\|`) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type jsonChange struct {
	A    ledger.JSONFloat `json:"a"`
	B    ledger.JSONFloat `json:"b"`
	Pct  ledger.JSONFloat `json:"delta_pct"`
	Unit string           `json:"unit,omitempty"`
}

type jsonDelta struct {
	Model        string                `json:"model"`
	Quantization string                `json:"quantization"`
	Hardware     string                `json:"hardware"`
	Workload     string                `json:"workload"`
	Concurrency  int                   `json:"concurrency"`
	RequestRate  ledger.JSONFloat      `json:"request_rate,omitempty"`
	ToolA        string                `json:"tool_a,omitempty"`
	ToolB        string                `json:"tool_b,omitempty"`
	TooFew       bool                  `json:"too_few_requests"`
	Notes        string                `json:"notes,omitempty"`
	Figures      map[string]jsonChange `json:"figures"`
}

type jsonBreach struct {
	Row          string           `json:"row"`
	Field        string           `json:"figure"`
	Threshold    string           `json:"threshold"`
	A            ledger.JSONFloat `json:"a"`
	B            ledger.JSONFloat `json:"b"`
	By           ledger.JSONFloat `json:"change"`
	Inconclusive bool             `json:"inconclusive"`
	JudgedOn     string           `json:"judged_on,omitempty"`
	Need         int              `json:"requests_needed"`
	Have         int              `json:"requests"`
	// Judged on intervals: the verdict, the change's interval and its confidence, and
	// what Need and Have count ("requests" a side, or "runs").
	Verdict    Verdict          `json:"verdict,omitempty"`
	Lo         ledger.JSONFloat `json:"change_lo"`
	Hi         ledger.JSONFloat `json:"change_hi"`
	Confidence ledger.JSONFloat `json:"confidence,omitempty"`
	NeedUnit   string           `json:"needed_unit,omitempty"`
}

// WriteCompareJSON writes one JSON object: the two sides' labels, every row with every
// CompareFields figure (A, B, Δ%; null when not measured), the breaches of the gate and
// the decisions of the two runs (DecisionChanges; omitted when neither side has any).
func WriteCompareJSON(w io.Writer, deltas []Delta, la, lb string, breaches []Breach, changes ...DecisionChange) error {
	type jsonDecision struct {
		Name    string           `json:"name"`
		Changed bool             `json:"changed"`
		A       *ledger.Decision `json:"a"`
		B       *ledger.Decision `json:"b"`
	}
	out := struct {
		A         string         `json:"a"`
		B         string         `json:"b"`
		Rows      []jsonDelta    `json:"rows"`
		Breaches  []jsonBreach   `json:"breaches"`
		Decisions []jsonDecision `json:"decisions,omitempty"`
	}{A: la, B: lb, Rows: []jsonDelta{}, Breaches: []jsonBreach{}}
	for _, c := range changes {
		out.Decisions = append(out.Decisions, jsonDecision{c.Name, c.Changed, c.A, c.B})
	}
	for _, d := range deltas {
		jd := jsonDelta{Model: d.Key.Model, Quantization: d.Key.Quantization, Hardware: d.Key.Hardware,
			Workload: d.Key.Workload, Concurrency: d.Key.Concurrency, RequestRate: ledger.JSONFloat(d.Key.RequestRate),
			TooFew: d.TooFew, Notes: d.Notes, Figures: map[string]jsonChange{}}
		if d.A != nil {
			jd.ToolA = d.A.Tool
		}
		if d.B != nil {
			jd.ToolB = d.B.Tool
		}
		for _, f := range d.Figures {
			jd.Figures[f.Field] = jsonChange{ledger.JSONFloat(f.A), ledger.JSONFloat(f.B), ledger.JSONFloat(f.Pct), f.Unit}
		}
		out.Rows = append(out.Rows, jd)
	}
	for _, b := range breaches {
		out.Breaches = append(out.Breaches, jsonBreach{b.Row, b.Threshold.Field, b.Threshold.Text,
			ledger.JSONFloat(b.Change.A), ledger.JSONFloat(b.Change.B), ledger.JSONFloat(b.By), b.Inconclusive, b.JudgedOn, b.Need, b.Have,
			b.Verdict, ledger.JSONFloat(b.Lo), ledger.JSONFloat(b.Hi), ledger.JSONFloat(b.Confidence), b.NeedUnit})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
