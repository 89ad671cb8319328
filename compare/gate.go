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
}

// TailBeyond is how many requests must lie beyond a tail percentile for a change in it
// to mean something: with fewer, a p99 is the largest value or two of the run, and an
// unchanged rerun moves it by more than 10%.
const TailBeyond = 2

var percentileName = regexp.MustCompile(`_p(\d+)_`)

// RequestsToConclude is the fewest successful requests a side for a change in the
// figure to be judged: MinConclusiveRequests, and for a percentile pq enough that
// TailBeyond requests lie beyond it (p90: 20, p95: 40, p99: 200).
func RequestsToConclude(field string) int {
	need := MinConclusiveRequests
	if m := percentileName.FindStringSubmatch(field); m != nil {
		if q, err := strconv.Atoi(m[1]); err == nil && q > 0 && q < 100 {
			need = max(need, int(math.Ceil(TailBeyond*100/float64(100-q))))
		}
	}
	return need
}

func (b Breach) String() string {
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
	if b.Inconclusive {
		s += fmt.Sprintf(", but inconclusive: %s needs %d successful requests a side, the rows have %d", b.Threshold.Field, b.Need, b.Have)
	}
	return s
}

// Gate holds every matched row against every threshold and returns the crossings, row
// by row. Rows on one side only cross nothing (Compare's notes name them), nor do two
// sides that are one measurement (Judge counts them: a gate over them judged nothing);
// a figure A measured and B's row did not is a breach. A crossing on rows too small for
// the figure is returned marked Inconclusive.
func Gate(deltas []Delta, ts []Threshold) []Breach {
	var out []Breach
	for _, d := range deltas {
		if d.A == nil || d.B == nil || SameMeasurement(d.A, d.B) {
			continue
		}
		have := min(d.A.Succeeded, d.B.Succeeded)
		for _, t := range ts {
			on := JudgedOn(t.Field, have)
			c, _ := d.Figure(cmp.Or(on, t.Field))
			lost := !math.IsNaN(c.A) && math.IsNaN(c.B)
			if by, ok := t.Crossed(c); ok || lost {
				b := Breach{Row: d.Name(), Threshold: t, Change: c, By: by, Have: have, Need: RequestsToConclude(t.Field)}
				b.Inconclusive = !lost && on == ""
				if on != t.Field {
					b.JudgedOn = on
				}
				out = append(out, b)
			}
		}
	}
	return out
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
		fmt.Fprintf(&b, "\n**Gate passed**; %d crossing(s) on too few requests to conclude.\n\n", len(breaches))
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
}

// WriteCompareJSON writes one JSON object: the two sides' labels, every row with every
// CompareFields figure (A, B, Δ%; null when not measured) and the breaches of the gate.
func WriteCompareJSON(w io.Writer, deltas []Delta, la, lb string, breaches []Breach) error {
	out := struct {
		A        string       `json:"a"`
		B        string       `json:"b"`
		Rows     []jsonDelta  `json:"rows"`
		Breaches []jsonBreach `json:"breaches"`
	}{A: la, B: lb, Rows: []jsonDelta{}, Breaches: []jsonBreach{}}
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
			ledger.JSONFloat(b.Change.A), ledger.JSONFloat(b.Change.B), ledger.JSONFloat(b.By), b.Inconclusive, b.JudgedOn, b.Need, b.Have})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
