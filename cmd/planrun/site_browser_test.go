package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/planrun/planrun/internal/testkit/browsertest"
)

// siteChart is what Chromium drew of one chart on a cell page.
type siteChart struct {
	W, H          float64
	Points        int // points of its line
	Band, Changes int // band polygons and change markers
	ChangeTitle   string
}

// testSiteInChromium writes the scenario's site with planrun report and opens it in
// headless Chromium: every link of the index leads to a page, the tiny cell's charts
// are drawn with their 30 points, a band and the version change marked at run 20, and
// there is no console error and no request that leaves the files.
func testSiteInChromium(t *testing.T, sc *scenario) {
	b := browsertest.Start(t, 1400, 1600)
	ctx := b.Ctx
	out := filepath.Join(t.TempDir(), "site")
	if code, stdout, errs := runCmd(t, "", "report", sc.results, "-o", out); code != exitOK || !strings.Contains(stdout, "Site of 30 runs written") {
		t.Fatalf("report: exit %d\n%s%s", code, stdout, errs)
	}
	index := "file://" + filepath.Join(out, "index.html")
	var links []string
	var gate21 string
	err := chromedp.Do(ctx, chromedp.Navigate(index), chromedp.WaitVisible("#run-table"))
	if err == nil {
		links, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("a[href]")].map(a => a.href)`))
	}
	if err == nil {
		gate21, err = chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("#run-table tr")].filter(r => r.textContent.includes("`+sc.runIDs[20]+`")).map(r => r.textContent).join("")`))
	}
	if err != nil {
		t.Fatalf("index.html: %v", err)
	}
	if len(links) != scenarioRuns+2 {
		t.Errorf("index.html has %d links, want %d runs and 2 cells", len(links), scenarioRuns)
	}
	if !strings.Contains(gate21, "regressed (") || !strings.Contains(gate21, "server 0.9.1 → 0.9.2") {
		t.Errorf("run 21's line on the index does not show its regression and the version change: %q", gate21)
	}
	var tinyPage string
	for _, l := range links {
		var title string
		err := chromedp.Do(ctx, chromedp.Navigate(l))
		if err == nil {
			title, err = chromedp.Run(ctx, chromedp.Title())
		}
		if err != nil || title == "" {
			t.Errorf("link %s: title %q, %v", l, title, err)
		}
		if strings.Contains(l, "/cells/") && strings.Contains(l, "tiny") {
			tinyPage = l
		}
	}
	var charts []siteChart
	var back []string
	err = chromedp.Do(ctx, chromedp.Navigate(tinyPage), chromedp.WaitVisible("svg.series"))
	if err == nil {
		charts, err = chromedp.Run(ctx, chromedp.Evaluate[[]siteChart](`[...document.querySelectorAll("svg.series")].map(s => {
			const r = s.getBoundingClientRect(), line = s.querySelector("polyline.line"), mark = s.querySelector("line.change title");
			return {W: r.width, H: r.height, Points: line ? line.points.numberOfItems : 0,
				Band: s.querySelectorAll("polygon.band").length, Changes: s.querySelectorAll("line.change").length,
				ChangeTitle: mark ? mark.textContent : ""};
		})`))
	}
	if err == nil {
		back, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("a[href]")].map(a => a.href)`))
	}
	if err != nil {
		t.Fatalf("cell page %s: %v", tinyPage, err)
	}
	if len(charts) != 4 {
		t.Fatalf("the cell page draws %d charts, want 4 (TTFT, TPOT, E2E, throughput)", len(charts))
	}
	for i, c := range charts {
		if c.W < 300 || c.H < 150 || c.Points != scenarioRuns || c.Changes != 1 || !strings.Contains(c.ChangeTitle, "run 20") ||
			!strings.Contains(c.ChangeTitle, "server 0.9.1 → 0.9.2") || (i < 3) != (c.Band == 1) {
			t.Errorf("chart %d: %+v", i, c)
		}
	}
	if len(back) != scenarioRuns+1 || !strings.HasSuffix(back[0], "/index.html") {
		t.Errorf("the cell page's links: %d, first %v", len(back), back[:min(1, len(back))])
	}
	for _, p := range b.Problems() {
		t.Errorf("Chromium: %s", p)
	}
}
