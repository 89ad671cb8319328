package runreport

import (
	"fmt"
	"math"
	"strings"

	"github.com/planrun/planrun/ledger"
)

// A decision is shown the same way in report.md, report.html and the terminal: the
// answer first (the chosen row and its figure), how sure it is, the runner-up, what was
// asked, and the rows the constraints excluded or left unsettled, each with the limit
// and by how much.

// decisionWords are a decision's words in one language.
type decisionWords struct {
	heading                                  string
	run, runnerUp, asked, over, with, and    string
	sure, indeterminate, none                string
	sureWhy, onlyOne, exactWhy, overlapWhy   string
	unboundedWhy, straddleWhy, sameWhy       string
	settle, noSettle, noneWhy, noRows, equal string
	excluded, unsure, notMeasured, breaks    string
	straddles, checkSettle, at               string
}

var englishDecision = decisionWords{
	heading: "Decision", run: "Run", runnerUp: "Runner-up", asked: "Asked", over: "over %d rows", with: "with", and: "and",
	sure: "Sure", indeterminate: "Indeterminate", none: "None",
	sureWhy:      "its %s interval does not overlap the runner-up's",
	onlyOne:      "it is the only row that meets the constraints",
	exactWhy:     "%s has no interval, so the figures are compared as measured",
	overlapWhy:   "its %s interval overlaps the runner-up's",
	unboundedWhy: "the rows cannot bound %s at %g%%",
	straddleWhy:  "it is best on %s, but its %s interval straddles the limit",
	sameWhy:      "it and the runner-up measured the same %s",
	settle:       "about %d %s a row would settle it (the rows have %d)",
	noSettle:     "the figures are equal, so no count of requests settles it",
	equal:        "the two differ by %.1f%%, within the noise: for this objective either will do",
	noneWhy:      "no row meets the constraints",
	noRows:       "no rows to decide among",
	excluded:     "Excluded", unsure: "Unsettled", notMeasured: "not measured", breaks: "%s %s breaks %s by %s",
	straddles: "straddles", checkSettle: "about %d %s would settle it", at: "at ",
}

var chineseDecision = decisionWords{
	heading: "决策", run: "选择", runnerUp: "次优", asked: "条件", over: "共 %d 行", with: "约束", and: "且",
	sure: "确定", indeterminate: "不确定", none: "无",
	sureWhy:      "其 %s 区间与次优不重叠",
	onlyOne:      "只有它满足全部约束",
	exactWhy:     "%s 没有区间，按测得值比较",
	overlapWhy:   "其 %s 区间与次优重叠",
	unboundedWhy: "这些行在 %[2]g%% 置信度下界定不了 %[1]s",
	straddleWhy:  "它的 %s 最优，但其 %s 区间跨过了限值",
	sameWhy:      "它与次优的 %s 测得值相同",
	settle:       "每行约需 %d 次%s才能判定（现有 %d）",
	noSettle:     "两者数值相同，增加请求也无法判定",
	equal:        "两者相差 %.1f%%，在噪声之内：就此目标而言任选其一即可",
	noneWhy:      "没有任何行满足约束",
	noRows:       "没有可供决策的行",
	excluded:     "排除", unsure: "未定", notMeasured: "未测得", breaks: "%s %s 不满足 %s，差 %s",
	straddles: "跨过", checkSettle: "约需 %d 次%s可判定", at: "",
}

// decisionView is one decision in words: the lines every format shows.
type decisionView struct {
	Name    string
	Outcome string // the outcome's word in the language
	Kind    string // ledger.DecisionSure, ...
	Answer  string // "Run q8_0 at c4: output_tok_s 100 tok/s (95–105)"; "" for none
	Why     string
	Runner  string // "" when there is none
	Asked   string
	Notes   []string // excluded and unsettled rows, one line each
}

func decisionWordsFor(lang string) decisionWords {
	if lang == "zh" {
		return chineseDecision
	}
	return englishDecision
}

// viewDecision puts a decision into words.
func viewDecision(d ledger.Decision, lang string) decisionView {
	w := decisionWordsFor(lang)
	v := decisionView{Name: d.Name, Kind: d.Outcome}
	switch d.Outcome {
	case ledger.DecisionSure:
		v.Outcome = w.sure
	case ledger.DecisionIndeterminate:
		v.Outcome = w.indeterminate
	default:
		v.Outcome = w.none
	}
	unit := fieldUnit(d.Objective.Field)
	if d.Chosen != nil {
		v.Answer = fmt.Sprintf("%s %s %s%s: %s", w.run, d.Chosen.Name, w.at, d.Chosen.Level(), figureWithInterval(d.Objective.Field, *d.Chosen, unit))
	}
	if d.RunnerUp != nil {
		v.Runner = fmt.Sprintf("%s: %s %s%s: %s", w.runnerUp, d.RunnerUp.Name, w.at, d.RunnerUp.Level(), figureWithInterval(d.Objective.Field, *d.RunnerUp, unit))
	}
	v.Why = decisionWhy(d, w)
	asked := d.Objective.String()
	if lang == "zh" {
		asked = strings.Replace(strings.Replace(asked, "maximize", "最大化", 1), "minimize", "最小化", 1)
	}
	var cons []string
	for _, c := range d.Constraints {
		cons = append(cons, c.String())
	}
	if len(cons) > 0 {
		asked += fmt.Sprintf(" %s %s", w.with, strings.Join(cons, " "+w.and+" "))
	}
	v.Asked = fmt.Sprintf("%s: %s, %s", w.asked, asked, fmt.Sprintf(w.over, len(d.Candidates)))
	for _, c := range d.Candidates {
		if c.Status == ledger.CandidateQualified {
			continue
		}
		label := w.unsure
		if c.Status == ledger.CandidateExcluded {
			label = w.excluded
		}
		var why []string
		for _, ch := range c.Broken() {
			why = append(why, checkText(ch, w))
		}
		v.Notes = append(v.Notes, fmt.Sprintf("%s: %s %s%s (%s)", label, c.Name, w.at, c.Level(), strings.Join(why, "; ")))
	}
	return v
}

// decisionWhy is the sentence after the outcome's word.
func decisionWhy(d ledger.Decision, w decisionWords) string {
	f := d.Objective.Field
	settle := func(s string) string {
		switch {
		case d.Need > 0 && d.Chosen != nil:
			have := d.Chosen.Requests
			if d.NeedUnit == "runs" {
				have = d.Chosen.Runs
			}
			s += "; " + fmt.Sprintf(w.settle, d.Need, unitWord(d.NeedUnit, w == chineseDecision), have)
			if d.RunnerUp != nil && d.Need > 10*have && have > 0 {
				a, b := float64(d.Chosen.Value), float64(d.RunnerUp.Value)
				s += "; " + fmt.Sprintf(w.equal, 100*math.Abs(a-b)/math.Max(math.Abs(a), math.Abs(b)))
			}
			return s
		case d.Outcome == ledger.DecisionIndeterminate && d.Chosen != nil && d.RunnerUp != nil && d.Chosen.Value == d.RunnerUp.Value:
			return s + "; " + w.noSettle
		}
		return s
	}
	conf := float64(d.Confidence)
	if math.IsNaN(conf) {
		conf = 0.95
	}
	switch {
	case d.Chosen == nil && len(d.Candidates) == 0:
		return w.noRows
	case d.Chosen == nil:
		return w.noneWhy
	case d.Chosen.Status == ledger.CandidateUnsure:
		for _, c := range d.Chosen.Broken() {
			return settle(fmt.Sprintf(w.straddleWhy, f, c.Field))
		}
	case d.RunnerUp == nil:
		return w.onlyOne
	case d.Chosen.Exact && d.Chosen.Value == d.RunnerUp.Value:
		return settle(fmt.Sprintf(w.sameWhy, f))
	case d.Chosen.Exact:
		return fmt.Sprintf(w.exactWhy, f)
	case d.Outcome == ledger.DecisionSure:
		return fmt.Sprintf(w.sureWhy, f)
	case !boundedCandidate(*d.Chosen) || !boundedCandidate(*d.RunnerUp):
		return settle(fmt.Sprintf(w.unboundedWhy, f, 100*conf))
	}
	return settle(fmt.Sprintf(w.overlapWhy, f))
}

func boundedCandidate(c ledger.Candidate) bool {
	return !math.IsNaN(float64(c.Lo)) && !math.IsNaN(float64(c.Hi))
}

func unitWord(u string, zh bool) string {
	if !zh {
		return u
	}
	if u == "runs" {
		return "运行"
	}
	return "请求"
}

// checkText says what one unmet constraint found: "memory_gb 0.2 GB > 0.05 by 0.15".
func checkText(ch ledger.Check, w decisionWords) string {
	unit := fieldUnit(ch.Field)
	switch {
	case ch.Note != "":
		return ch.Note
	case ch.Verdict == ledger.CheckNotMeasured:
		return ch.Field + " " + w.notMeasured
	case ch.Verdict == ledger.CheckIndeterminate:
		s := fmt.Sprintf("%s %s %s %s %s %s", ch.Field, fig(float64(ch.Value), unit), "("+intervalText(float64(ch.Lo), float64(ch.Hi), float64(ch.Value))+")",
			w.straddles, ch.Op, ledger.FormatFloat(ch.Limit))
		if ch.Need > 0 {
			s += ", " + fmt.Sprintf(w.checkSettle, ch.Need, unitWord(ch.NeedUnit, w == chineseDecision))
		}
		return s
	}
	return fmt.Sprintf(w.breaks, ch.Field, fig(float64(ch.Value), unit), ch.Op+" "+ledger.FormatFloat(ch.Limit), fig(math.Abs(float64(ch.By)), unit))
}

// figureWithInterval is "100 tok/s (95–105)", the interval left out when the field has
// none.
func figureWithInterval(field string, c ledger.Candidate, unit string) string {
	s := field + " " + fig(float64(c.Value), unit)
	if c.Exact {
		return s
	}
	return s + " (" + intervalText(float64(c.Lo), float64(c.Hi), float64(c.Value)) + ")"
}

// intervalText is "95–105", with "?" for an end the row could not bound, written as
// the figure ref is.
func intervalText(lo, hi, ref float64) string {
	end := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "?"
		}
		return figAs(v, ref, "")
	}
	return end(lo) + "–" + end(hi)
}

// fig writes a figure with three or four significant digits and its unit.
func fig(v float64, unit string) string { return figAs(v, v, unit) }

// figAs writes v with the decimals fig gives ref, so an interval's ends read like the
// figure they bound (100 (95–105), not 100 (95.0–105)).
func figAs(v, ref float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	var s string
	switch a := math.Abs(ref); {
	case a >= 100:
		s = fmt.Sprintf("%.0f", v)
	case a >= 10:
		s = fmt.Sprintf("%.1f", v)
	case a >= 1:
		s = fmt.Sprintf("%.2f", v)
	default:
		s = fmt.Sprintf("%.3g", v)
	}
	if unit == "" {
		return s
	}
	if unit == "%" {
		return s + "%"
	}
	return s + " " + unit
}

// fieldUnit is the unit of a result.* field, "" when it has none.
func fieldUnit(name string) string {
	if f, ok := ledger.ResultFieldNamed(name); ok {
		return f.Unit
	}
	return ""
}

// decisionSection writes the report's Decision section: each decision's answer, its
// outcome in bold with why, the runner-up, what was asked, and the rows left out.
func decisionSection(b *strings.Builder, lang string, ds []ledger.Decision, charts []Chart) {
	if len(ds) == 0 {
		return
	}
	w := decisionWordsFor(lang)
	fmt.Fprintf(b, "## %s\n\n", w.heading)
	for _, d := range ds {
		v := viewDecision(d, lang)
		if len(ds) > 1 {
			fmt.Fprintf(b, "### %s\n\n", v.Name)
		}
		if v.Answer != "" {
			fmt.Fprintf(b, "%s.\n\n", markdownEscape(v.Answer))
		}
		fmt.Fprintf(b, "**%s**: %s.\n\n", v.Outcome, markdownEscape(v.Why))
		if v.Runner != "" {
			fmt.Fprintf(b, "%s.\n\n", markdownEscape(v.Runner))
		}
		fmt.Fprintf(b, "%s.\n\n", markdownEscape(v.Asked))
		for _, n := range v.Notes {
			fmt.Fprintf(b, "- %s\n", markdownEscape(n))
		}
		if len(v.Notes) > 0 {
			b.WriteString("\n")
		}
		if c, ok := decisionChart(d, charts); ok {
			fmt.Fprintf(b, "![%s](%s) ([SVG](%s))\n\n", c.Title, c.PNG, c.File)
		}
	}
}

// decisionChart is the chart of decision d among charts.
func decisionChart(d ledger.Decision, charts []Chart) (Chart, bool) {
	for _, c := range charts {
		if c.File == DecisionChartPrefix+fileSafe(d.Name)+".svg" {
			return c, true
		}
	}
	return Chart{}, false
}

// markdownEscape keeps a glob's * from turning into emphasis (GitHub leaves the
// underscores inside q4_K_M and output_tok_s as they are).
func markdownEscape(s string) string {
	return strings.NewReplacer("*", `\*`, "|", `\|`).Replace(s)
}

// DecisionText is a decision as the terminal prints it: the answer and its outcome on
// the first line, then the runner-up, what was asked and the rows left out, indented.
func DecisionText(d ledger.Decision) []string {
	v := viewDecision(d, "en")
	head := fmt.Sprintf("Decision %q: %s: %s.", v.Name, strings.ToLower(v.Outcome), v.Why)
	if v.Answer != "" {
		head = fmt.Sprintf("Decision %q: %s (%s: %s).", v.Name, v.Answer, strings.ToLower(v.Outcome), v.Why)
	}
	out := []string{head}
	if v.Runner != "" {
		out = append(out, "  "+v.Runner+".")
	}
	out = append(out, "  "+v.Asked+".")
	for _, n := range v.Notes {
		out = append(out, "  "+n)
	}
	return out
}
