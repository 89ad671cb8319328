package report

import (
	"bytes"
	"strings"
	"testing"
)

// htmlTestReport is reportRows with SLO attainment on every row but the vLLM one, and a
// VRAM trace on one GPU, so every kind of chart has something to draw.
func htmlTestReport(t *testing.T) Report {
	t.Helper()
	rows := reportRows()
	for i := range rows {
		if rows[i].CellID != "qwen-7b-fp8-vllm" {
			rows[i].SLOAttainmentPct = 70 + 10*float64(i)
		}
	}
	rows[0].Notes = "<b>not bold</b>"
	vram := []VRAMSeries{
		{Label: "qwen-7b-q4-ollama c1", GPU: "0 RTX 4060", Points: []VRAMPoint{{0, 0.6}, {1, 4.2}, {2, 4.5}}},
		{Label: "qwen-7b-q4-ollama c4", GPU: "0 RTX 4060", Points: []VRAMPoint{{0, 0.6}, {1, 4.4}, {2, 4.8}}},
	}
	charts, err := Charts(rows, vram)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 4 {
		t.Fatalf("charts = %d, want latency, throughput/latency, VRAM and SLO", len(charts))
	}
	return Report{Title: "Qwen on one card", Rows: rows, Env: reportEnv(), Charts: charts}
}

func TestWriteHTML(t *testing.T) {
	r := htmlTestReport(t)
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, "<svg"); n != len(r.Charts) {
		t.Errorf("%d inline SVGs, want one per chart (%d)", n, len(r.Charts))
	}
	// Self-contained: nothing to fetch, nothing to run.
	for _, banned := range []string{"<script", "src=", "href=", "url(", "@import", "<link"} {
		if strings.Contains(page, banned) {
			t.Errorf("report.html holds %q", banned)
		}
	}
	for _, want := range []string{
		"<strong>TPOT</strong> = (E2E − TTFT) / (output tokens − 1)", // the Markdown's formula, converted
		"<td>0.820 / 0.950</td>", "<td>rtx4060-7b-q4: above [2] [3]</td>", // headline
		"<td>0.820 / 0.900 / 0.950</td>", // per-cell detail
		"&lt;b&gt;not bold&lt;/b&gt;",    // a note is text, not markup
		`<tr class="interrupted">`,       // a row that did not end ok stands out
		"Driver: 580.65",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if n := strings.Count(page, "2/30 failed (5xx=1;timeout=1)"); n != 1 {
		t.Errorf("a note shared by three rows is shown %d times, want once", n)
	}
	if n := strings.Count(page, `<details class="cell"`); n != 2 {
		t.Errorf("%d cell sections, want 2", n)
	}
}

// The Markdown for a PR: the compact table first, each note once above the fold, and
// every chart as PNG linking its SVG.
func TestWriteMarkdownForPR(t *testing.T) {
	r := htmlTestReport(t)
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	fold := strings.Index(md, "<details>")
	if fold < 0 {
		t.Fatalf("nothing folded under <details>:\n%s", md)
	}
	top := md[:fold]
	if !strings.Contains(top, "| Cell | Workload | Load | TTFT p50/p99 (s) | TPOT p50/p99 (ms) | tok/s | VRAM (GB) | Verdict |") {
		t.Errorf("no headline table above the fold:\n%s", top)
	}
	if strings.Contains(top, "Prompt tokens") {
		t.Errorf("the full table is above the fold:\n%s", top)
	}
	if n := strings.Count(top, "2/30 failed (5xx=1;timeout=1)"); n != 1 {
		t.Errorf("a note shared by three rows is shown %d times above the fold, want once", n)
	}
	for _, c := range r.Charts {
		if want := "![" + c.Title + "](" + c.PNG + ") ([SVG](" + c.File + "))"; !strings.Contains(top, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
