package site

import "html/template"

const style = `<style>
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1360px; color: #222; }
table { border-collapse: collapse; font-size: 13px; margin: 0.5em 0 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: left; white-space: nowrap; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
.change { color: #d62728; }
.note { color: #8a5a00; }
nav { margin-bottom: 1em; }
</style>`

var indexTmpl = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>planrun results: {{.Dir}}</title>` + style + `</head>
<body>
<h1>planrun results</h1>
<p>{{.Dir}}: {{len .Runs}} runs, {{len .Cells}} cell levels.</p>
<p id="gate">Gate: the site's own, each run against its cells' last {{.GateRuns}} runs on {{.GateFigures}}
(regressed / within noise / insufficient data), as <code>planrun compare -baseline last:{{.GateRuns}} RUN</code> judges
by default. A gate you run with another N, <code>-fail-on</code> or <code>-key</code> judges differently.</p>
{{range .Notes}}<p class="note">Note: {{.}}</p>
{{end}}
<h2 id="cells">Cells</h2>
<table id="cell-table"><tr><th>cell</th><th>plan</th><th>runs</th><th>TTFT p50 (s), last</th><th>trend</th></tr>
{{range .Cells}}<tr><td><a href="cells/{{.File}}">{{.Key}}</a></td><td>{{.Key.Plan}}</td><td class="num">{{.Runs}}</td><td class="num">{{.Last}}</td><td>{{.Trend}}</td></tr>
{{end}}</table>
<h2 id="runs">Runs</h2>
<table id="run-table"><tr><th>date (UTC)</th><th>run</th><th>plan</th><th>cells ok</th><th>failed</th><th>gate</th><th>environment change</th></tr>
{{range .Runs}}<tr><td>{{.Date}}</td><td><a href="runs/{{.File}}">{{.ID}}</a></td><td>{{.Plan}}</td><td class="num">{{.OK}}</td><td class="num">{{.Failed}}</td><td>{{.Gate}}</td><td class="change">{{.Changes}}</td></tr>
{{end}}</table>
</body></html>
`))

var cellTmpl = template.Must(template.New("cell").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Key}}</title>` + style + `</head>
<body>
` + backLink + `
<h1>{{.Key}}</h1>
<p>Plan {{.Key.Plan}}, {{.Runs}} measured runs, oldest first. Red dashed lines mark the runs whose environment changed.</p>
<div class="charts">{{range .Charts}}<figure class="chart">{{.}}</figure>{{end}}</div>
{{if .Marks}}<h2 id="changes">Environment changes</h2><ul>{{range .Marks}}<li class="change">{{.Text}}</li>{{end}}</ul>{{end}}
<h2 id="points">Runs</h2>
<table><tr><th>#</th><th>date (UTC)</th><th>run</th><th>planrun</th><th>plan hash</th><th>server</th><th>model digest</th><th>GPU / driver</th><th>host</th>
<th>TTFT p50 s</th><th>TTFT p99 s</th><th>TPOT p50 ms</th><th>tok/s</th><th>changes</th></tr>
{{range .Points}}<tr><td class="num">{{.N}}</td><td>{{.Date}}</td><td><a href="../runs/{{.RunFile}}">{{.ID}}</a></td><td>{{.Planrun}}</td><td>{{.PlanHash}}</td><td>{{.Server}}</td><td>{{.Model}}</td><td>{{.GPU}}</td><td>{{.Host}}</td>{{range .Figures}}<td class="num">{{.}}</td>{{end}}<td class="change">{{.Changes}}</td></tr>
{{end}}</table>
</body></html>
`))

var runTmpl = template.Must(template.New("run").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>run {{.ID}}</title>` + style + `</head>
<body>
` + backLink + `
<h1>Run {{.ID}}</h1>
<p>This run's directory has no report.html{{if .Dir}} ({{.Dir}}){{end}}; its rows:</p>
<table><tr><th>cell</th><th>concurrency</th><th>status</th><th>notes</th></tr>
{{range .Rows}}<tr><td>{{.CellID}}</td><td class="num">{{.Concurrency}}</td><td>{{.Status}}</td><td>{{.Notes}}</td></tr>
{{end}}</table>
</body></html>
`))
