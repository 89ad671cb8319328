package runreport

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/planrun/planrun/internal/testkit/browsertest"
	"github.com/planrun/planrun/ledger"
)

// chartBox is where a chart's SVG sits on the page, in CSS pixels from the page's top.
type chartBox struct{ X, Y, W, H float64 }

// pageFit is what the rendered page says about its width and its links: the
// document's scroll width, every table wider than the box it sits in (named by its id
// or the heading above it, with both widths), and every in-page link (href="#id")
// whose target is missing, beside how many in-page links there are.
type pageFit struct {
	ScrollWidth float64
	Overflowing []string
	Links       int
	Missing     []string
}

// pageWidth is the window width report.html must fit: a laptop's browser window.
const pageWidth = 1400

const pageFitJS = `(() => {
	const name = t => t.id || (t.closest(".scroll")?.previousElementSibling?.textContent ?? "") + " in " + (t.closest("details")?.querySelector("h3")?.textContent ?? "");
	const over = [...document.querySelectorAll("table")].filter(t => {
		const box = t.parentElement.getBoundingClientRect().width;
		return t.getBoundingClientRect().width > box + 0.5;
	}).map(t => name(t) + ": " + Math.round(t.getBoundingClientRect().width) + " px in " + Math.round(t.parentElement.getBoundingClientRect().width));
	const links = [...document.querySelectorAll('a[href^="#"]')];
	return {ScrollWidth: document.documentElement.scrollWidth, Overflowing: over, Links: links.length,
		Missing: links.filter(a => !document.getElementById(a.getAttribute("href").slice(1))).map(a => a.getAttribute("href"))};
})()`

// TestHTMLInChromium renders report.html in headless Chromium (Debian's chromium
// package; .ci/run installs it) and checks what a reader would see: no console error,
// no request leaving the file, one SVG per chart, and each chart's region of the
// screenshot holding its series' colours; at 1400 px no table is wider than the page
// (nor scrolls inside its box), and every [n] marker's link has its note.
// PLANRUN_SCREENSHOT=path keeps the screenshot.
func TestHTMLInChromium(t *testing.T) {
	b := browsertest.Start(t, pageWidth, 2000)
	ctx := b.Ctx
	r := htmlTestReport(t)
	path := filepath.Join(t.TempDir(), ledger.HTMLFile)
	if err := ledger.WriteFileAtomic(path, func(w io.Writer) error { return WriteHTML(w, r) }); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Do(ctx, chromedp.Navigate("file://"+path), chromedp.WaitVisible("#headline"))
	var boxes []chartBox
	if err == nil {
		boxes, err = chromedp.Run(ctx, chromedp.Evaluate[[]chartBox](`[...document.querySelectorAll("figure.chart svg")].map(s => {
			const r = s.getBoundingClientRect();
			return {X: r.left + window.scrollX, Y: r.top + window.scrollY, W: r.width, H: r.height};
		})`))
	}
	var fit pageFit
	if err == nil {
		fit, err = chromedp.Run(ctx, chromedp.Evaluate[pageFit](pageFitJS))
	}
	var shot []byte
	if err == nil {
		shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	}
	if err != nil {
		t.Fatalf("rendering %s in Chromium: %v", path, err)
	}
	if p := os.Getenv("PLANRUN_SCREENSHOT"); p != "" {
		os.WriteFile(p, shot, 0o644)
	}
	for _, p := range b.Problems() {
		t.Errorf("Chromium: %s", p)
	}

	if fit.ScrollWidth > pageWidth {
		t.Errorf("the page is %.0f px wide in a %d px window", fit.ScrollWidth, pageWidth)
	}
	for _, o := range fit.Overflowing {
		t.Errorf("a table is wider than its box at %d px: %s", pageWidth, o)
	}
	if fit.Links == 0 || len(fit.Missing) > 0 {
		t.Errorf("%d in-page links; without a target: %v", fit.Links, fit.Missing)
	}

	// The page shows the decisions' charts first, under the decisions, then the rest.
	charts := slices.Concat(slices.DeleteFunc(slices.Clone(r.Charts), func(c Chart) bool { return !isDecisionChart(c) }),
		slices.DeleteFunc(slices.Clone(r.Charts), isDecisionChart))
	if len(boxes) != len(charts) {
		t.Fatalf("the page shows %d chart SVGs, want %d", len(boxes), len(r.Charts))
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	for i, box := range boxes {
		if box.W < 300 || box.H < 150 {
			t.Errorf("chart %q is drawn %.0f×%.0f px", charts[i].Title, box.W, box.H)
		}
		// The first cell has a figure in every chart; the latency chart shows both cells.
		want := []color.RGBA{seriesColor(0)}
		if charts[i].File == LatencyChartFile {
			want = append(want, seriesColor(1))
		}
		for j, c := range want {
			if n := countColor(img, box, c); n < 20 {
				t.Errorf("chart %q: %d pixels of series %d's colour %v in its region of the screenshot", charts[i].Title, n, j, c)
			}
		}
	}
}

// countColor counts the pixels within box whose colour is within a small distance of c
// (antialiasing blends the edges of lines).
func countColor(img image.Image, box chartBox, c color.RGBA) int {
	n := 0
	rect := image.Rect(int(box.X), int(box.Y), int(box.X+box.W), int(box.Y+box.H)).Intersect(img.Bounds())
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if near(r>>8, c.R) && near(g>>8, c.G) && near(b>>8, c.B) {
				n++
			}
		}
	}
	return n
}

func near(v uint32, want uint8) bool {
	d := int(v) - int(want)
	return d >= -12 && d <= 12
}
