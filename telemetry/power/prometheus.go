package power

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// prometheus reads watts from a Prometheus server's instant query (/api/v1/query), or,
// when the URL is an exporter's /metrics, from the series of one metric: a DCGM
// exporter's DCGM_FI_DEV_POWER_USAGE, a smart plug's exporter. Every series the answer
// holds is summed (one per GPU, say).
type prometheus struct {
	hc    *http.Client
	url   string
	query string
}

// Prometheus is a Source that reads the power in watts from url: a Prometheus server's
// base URL with a PromQL query (its result summed), or an exporter's /metrics URL with
// a metric name (its series summed).
func Prometheus(hc *http.Client, url, query string) Source {
	if hc == nil {
		hc = http.DefaultClient
	}
	return prometheus{hc: hc, url: url, query: query}
}

// scrapes reports whether the URL is an exporter's metrics page rather than a
// Prometheus server.
func (p prometheus) scrapes() bool {
	return strings.HasSuffix(strings.TrimRight(p.url, "/"), "/metrics")
}

func (p prometheus) Read(ctx context.Context) (float64, error) {
	u := strings.TrimRight(p.url, "/")
	if !p.scrapes() {
		u += "/api/v1/query?query=" + url.QueryEscape(p.query)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, fmt.Errorf("%s: %s: %s", p.String(), resp.Status, firstLine(string(b)))
	}
	if p.scrapes() {
		return p.sumMetric(resp.Body)
	}
	return p.sumQuery(resp.Body)
}

// sumMetric sums the query metric's series in an exporter's text exposition.
func (p prometheus) sumMetric(r io.Reader) (float64, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p.url, err)
	}
	f := fams[p.query]
	if f == nil || len(f.GetMetric()) == 0 {
		return 0, fmt.Errorf("%s has no metric %s", p.url, p.query)
	}
	var sum float64
	for _, m := range f.GetMetric() {
		switch {
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		case m.GetUntyped() != nil:
			sum += m.GetUntyped().GetValue()
		default:
			return 0, fmt.Errorf("%s: %s is not a gauge of watts", p.url, p.query)
		}
	}
	return sum, nil
}

// sumQuery sums an instant query's vector (or reads its scalar).
func (p prometheus) sumQuery(r io.Reader) (float64, error) {
	var ans struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&ans); err != nil {
		return 0, fmt.Errorf("%s: not a Prometheus query answer: %w", p.url, err)
	}
	if ans.Status != "success" {
		return 0, fmt.Errorf("%s: query %q: %s", p.url, p.query, ans.Error)
	}
	var values [][2]any
	switch ans.Data.ResultType {
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(ans.Data.Result, &v); err != nil {
			return 0, err
		}
		values = append(values, v)
	case "vector":
		var vec []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(ans.Data.Result, &vec); err != nil {
			return 0, err
		}
		for _, s := range vec {
			values = append(values, s.Value)
		}
	default:
		return 0, fmt.Errorf("%s: query %q gave a %s; want an instant vector of watts", p.url, p.query, ans.Data.ResultType)
	}
	if len(values) == 0 {
		return 0, fmt.Errorf("%s: query %q matched no series", p.url, p.query)
	}
	var sum float64
	for _, v := range values {
		s, _ := v[1].(string)
		w, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: query %q gave %v, not a number", p.url, p.query, v[1])
		}
		sum += w
	}
	return sum, nil
}

func (prometheus) Counter() bool { return false }

// String names the meter, without any user and password the URL holds.
func (p prometheus) String() string {
	shown := p.url
	if u, err := url.Parse(p.url); err == nil && u.User != nil {
		u.User = nil
		shown = u.String()
	}
	if p.scrapes() {
		return fmt.Sprintf("prometheus %s %s", shown, p.query)
	}
	return fmt.Sprintf("prometheus %s query %s", shown, p.query)
}
