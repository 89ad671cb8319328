package runreport

import (
	"bytes"
	"html/template"
	"io"
	"regexp"
	"strings"

	"github.com/planrun/planrun/ledger"
)

// WriteHTML renders the report as one self-contained page: no script, nothing fetched
// from the network, the charts inline as SVG. It shows what the Markdown shows, from
// the same sections: the headline table and its notes, each cell's capacity, the
// charts, each cell's levels with every figure, at the report's percentiles plus std and
// with SLO attainment and goodput, the formulas and the environment.
func WriteHTML(w io.Writer, r Report) error {
	title := r.Title
	if title == "" {
		title = "planrun results"
	}
	var emb []ledger.Row
	r.Rows, emb = splitEmbeddings(r.Rows)
	body, notes := headline(r.Rows)
	page := htmlPage{Title: title, Env: envItems(r.Env), Head: headlineHead, Notes: notes, Capacities: r.Capacities}
	if r.Run != "" || !r.Started.IsZero() {
		page.Run = strings.TrimSpace("Run " + r.Run)
		if !r.Started.IsZero() {
			page.Run += ", started " + r.Started.UTC().Format("2006-01-02 15:04:05 UTC")
		}
	}
	if r.Env.PlanPath != "" || r.Env.PlanHash != "" {
		page.Plan = strings.TrimSpace(r.Env.PlanPath + " (" + r.Env.PlanHash + "), planrun " + r.Env.PlanrunVersion)
	}
	for i, cells := range body {
		page.Rows = append(page.Rows, htmlRow{Cells: noteLinks(cells), Status: r.Rows[i].Status})
	}
	for _, c := range r.Charts {
		if !isDecisionChart(c) {
			page.Charts = append(page.Charts, htmlChart{Title: c.Title, SVG: inlineSVG(c.SVG)})
		}
	}
	for _, d := range r.Summary.Decisions {
		hd := htmlDecision{decisionView: viewDecision(d, r.Language)}
		if c, ok := decisionChart(d, r.Charts); ok {
			hd.Chart = &htmlChart{Title: c.Title, SVG: inlineSVG(c.SVG)}
		}
		page.Decisions = append(page.Decisions, hd)
	}
	page.Cells = append(htmlCells(r.Rows, r.Percentiles), embeddingsHTMLCells(emb)...)
	for _, l := range formulaLines(r.Rows) {
		page.Formulas = append(page.Formulas, inlineMarkdown(l))
	}
	return htmlReport.Execute(w, page)
}

// noteMarker is a headline row's "[n]", citing note n under the table.
var noteMarker = regexp.MustCompile(`\[(\d+)\]`)

// noteLinks escapes a headline row's cells and makes the verdict's [n] markers links to
// their notes (the list items note-n).
func noteLinks(cells []string) []template.HTML {
	out := make([]template.HTML, len(cells))
	for i, c := range cells {
		h := template.HTMLEscapeString(c)
		if i == len(cells)-1 {
			h = noteMarker.ReplaceAllString(h, `<a href="#note-$1">[$1]</a>`)
		}
		out[i] = template.HTML(h)
	}
	return out
}

type htmlPage struct {
	Title, Plan, Run string
	Decisions        []htmlDecision
	Head             []string
	Rows             []htmlRow
	Notes            []note
	Capacities       []ledger.Capacity
	Charts           []htmlChart
	Cells            []htmlCell
	Formulas         []template.HTML
	Env              [][2]string
}

// htmlDecision is a decision in words, with its chart when it has one.
type htmlDecision struct {
	decisionView
	Chart *htmlChart
}

type htmlRow struct {
	Cells  []template.HTML
	Status string
}

type htmlChart struct {
	Title string
	SVG   template.HTML
}

type htmlCell struct {
	ID, About string
	Tables    []htmlTable
}

// htmlTable is one of a cell's tables, one row per level.
type htmlTable struct {
	Title string
	Note  template.HTML
	Head  []string
	Rows  [][]string
}

// htmlCells groups the rows by cell, in order of first appearance, each with its table
// of every figure, its percentile table and, where its rows have them, its SLO,
// reasoning, model mix, session, agent-loop, tool-call, prefix-cache and energy tables.
func htmlCells(rows []ledger.Row, pcts []int) []htmlCell {
	var cells []htmlCell
	var levels [][]ledger.Row
	index := map[string]int{}
	for _, row := range rows {
		i, ok := index[row.CellID]
		if !ok {
			i = len(cells)
			index[row.CellID] = i
			cells = append(cells, htmlCell{ID: row.CellID, About: cellAbout(row)})
			levels = append(levels, nil)
		}
		levels[i] = append(levels[i], row)
	}
	for i, rs := range levels {
		// The cell's own section names it: its table starts at the concurrency.
		detail := htmlTable{Head: detailHead[1:]}
		for _, r := range rs {
			detail.Rows = append(detail.Rows, detailCells(r)[1:])
		}
		pct := htmlTable{Title: "Percentiles"}
		pct.Head, pct.Rows = percentileCells(rs, pcts)
		cells[i].Tables = []htmlTable{detail, pct}
		slo := htmlTable{Title: "SLO", Note: inlineMarkdown(sloNote)}
		if slo.Head, slo.Rows = sloCells(rs); len(slo.Rows) > 0 {
			cells[i].Tables = append(cells[i].Tables, slo)
		}
		reasoning := htmlTable{Title: "Reasoning", Note: inlineMarkdown(reasoningNote)}
		if reasoning.Head, reasoning.Rows = reasoningCells(rs); len(reasoning.Rows) > 0 {
			cells[i].Tables = append(cells[i].Tables, reasoning)
		}
		if mix, ok := mixHTMLTable(rs); ok {
			cells[i].Tables = append(cells[i].Tables, mix)
		}
		cells[i].Tables = append(cells[i].Tables, sessionHTMLTables(rs)...)
		cells[i].Tables = append(cells[i].Tables, figureHTMLTables(rs)...)
	}
	return cells
}

// served is the quantization the server serves, where the plan's label does not
// already say it.
func served(r ledger.Row) string {
	if r.QuantizationServed == "" || strings.EqualFold(r.QuantizationServed, r.Quantization) {
		return ""
	}
	return r.QuantizationServed
}

// cellAbout says what produced a cell's rows, in one line.
func cellAbout(r ledger.Row) string {
	var parts []string
	for _, p := range [][2]string{{"model", r.Model}, {"model id", r.ModelID}, {"quantization", r.Quantization},
		{"served as", served(r)}, {"tool", r.Tool}, {"backend", ledger.SafeURL(r.BackendURL)}, {"hardware", r.Hardware}, {"GPU", r.GPU},
		{"workload", r.Workload}} {
		if p[1] != "" {
			parts = append(parts, p[0]+" "+p[1])
		}
	}
	return strings.Join(parts, " · ")
}

// inlineSVG drops the XML prolog of a chart so it can sit inside HTML. The SVG is
// planrun's own output (gonum escapes the text in it), hence trusted as HTML.
func inlineSVG(svg []byte) template.HTML {
	if i := bytes.Index(svg, []byte("<svg")); i >= 0 {
		svg = svg[i:]
	}
	return template.HTML(svg)
}

var (
	mdBold = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	mdCode = regexp.MustCompile("`([^`]+)`")
)

// inlineMarkdown turns the bold and code spans of a formula line into HTML, after
// escaping everything else.
func inlineMarkdown(s string) template.HTML {
	h := template.HTMLEscapeString(s)
	h = mdBold.ReplaceAllString(h, "<strong>$1</strong>")
	h = mdCode.ReplaceAllString(h, "<code>$1</code>")
	return template.HTML(h)
}

var htmlReport = template.Must(template.New(ledger.HTMLFile).Funcs(template.FuncMap{"inc": func(i int) int { return i + 1 }}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; margin: 0 auto; padding: 1.5em 2em; max-width: 1600px; }
h1 { font-size: 1.6em; margin: 0 0 .2em; } h2 { font-size: 1.25em; margin: 1.6em 0 .5em; border-bottom: 1px solid #d0d7de; padding-bottom: .2em; }
h3 { font-size: 1.05em; margin: .8em 0 .3em; } summary h3 { margin: 0; display: inline; }
h4 { font-size: 1em; margin: .6em 0 .2em; }
.plan { color: #59636e; margin: 0 0 1em; }
table { border-collapse: collapse; margin: .4em 0 .8em; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d7de; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
tr.failed td, tr.interrupted td { background: #fff1f0; }
.scroll { overflow-x: auto; }
.notes { color: #3d444d; }
figure { margin: 1em 0 2em; }
/* A cell's tables have 20 columns: at 1400 px they fit only in a smaller font, wrapping within a cell. */
.cell table { font-size: 12px; } .cell th, .cell td { padding: .25em .35em; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eaeef2; }
details { margin: .4em 0; } summary { cursor: pointer; }
.about { color: #59636e; margin: .3em 0; }
code { background: #f6f8fa; padding: 0 .25em; border-radius: 3px; }
.decision .answer { font-size: 1.15em; font-weight: 600; margin: .3em 0; }
.decision.sure .outcome strong { color: #1a7f37; } .decision.indeterminate .outcome strong { color: #9a6700; } .decision.none .outcome strong { color: #cf222e; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{with .Run}}<p class="plan" id="run">{{.}}</p>{{end}}
{{with .Plan}}<p class="plan">Plan {{.}}</p>{{end}}
{{with .Decisions}}<h2>Decision</h2>
{{range .}}<section class="decision {{.Kind}}" id="decision-{{.Name}}">{{if gt (len $.Decisions) 1}}<h3>{{.Name}}</h3>{{end}}
{{with .Answer}}<p class="answer">{{.}}.</p>{{end}}
<p class="outcome"><strong>{{.Outcome}}</strong>: {{.Why}}.</p>
{{with .Runner}}<p>{{.}}.</p>{{end}}
<p class="about">{{.Asked}}.</p>
{{with .Notes}}<ul class="excluded">{{range .}}<li>{{.}}</li>
{{end}}</ul>{{end}}
{{with .Chart}}<figure class="chart decision-chart" aria-label="{{.Title}}">{{.SVG}}</figure>{{end}}
</section>
{{end}}{{end}}<h2>Results</h2>
{{if .Rows}}<div class="scroll"><table id="headline">
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr class="{{.Status}}">{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{with .Notes}}<ol class="notes">{{range $n, $note := .}}<li id="note-{{inc $n}}">{{.Text}} <span class="about">({{range $i, $r := .Rows}}{{if $i}}, {{end}}{{$r}}{{end}})</span></li>
{{end}}</ol>{{end}}
{{else}}<p>No results yet.</p>{{end}}
{{with .Capacities}}<h3>Capacity</h3>
<ul id="capacity">{{range .}}<li><code>{{.CellID}}</code>: {{.}}</li>
{{end}}</ul>{{end}}
{{with .Charts}}<h2>Charts</h2>
{{range .}}<figure class="chart" aria-label="{{.Title}}">{{.SVG}}</figure>
{{end}}{{end}}
{{with .Cells}}<h2>Cells</h2>
{{range .}}<details class="cell" open><summary><h3>{{.ID}}</h3></summary>
<p class="about">{{.About}}</p>
{{range .Tables}}{{with .Title}}<h4>{{.}}</h4>{{end}}
{{with .Note}}<p class="about">{{.}}</p>{{end}}
<div class="scroll"><table>
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{end}}</details>
{{end}}{{end}}
<h2>How the figures are measured</h2>
<ul>{{range .Formulas}}<li>{{.}}</li>
{{end}}</ul>
<h2>Environment</h2>
<ul>{{range .Env}}<li>{{index . 0}}: {{index . 1}}</li>
{{end}}</ul>
</body>
</html>
`))
