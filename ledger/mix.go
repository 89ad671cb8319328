package ledger

import (
	"encoding/json"
	"strings"

	"github.com/planrun/planrun/stats"
)

// A model mix's row (a workload with models = {...}) keeps its pooled figures in the
// row's own columns, as every row does, and each model name's figures beside them in
// Row.Models: one row per cell per level stays true for every reader of the ledger
// (history, compare, the index, references, goals), which never meet a per-model row.
// The CSV holds Models as JSON in the model_mix column; summary.json as its "models"
// section, one entry per row of a mix.

// ModelFigures are one model name's figures over the row's measured requests sent to
// that name, every run pooled: the same definitions as the row's own columns.
type ModelFigures struct {
	Name      string
	Weight    float64 // the name's weight in the plan's mix
	Requests  int
	Succeeded int
	Failed    int
	Failures  map[string]int // failed requests by error class
	// Latencies in seconds, as the Row's.
	TTFT, TPOT, E2E stats.Dist
	OutputTokens    int // Σ output tokens of its successful requests
}

// NewModelFigures are the figures of a model name of weight w from its requests' summary.
func NewModelFigures(name string, w float64, s stats.Summary) ModelFigures {
	f := ModelFigures{Name: name, Weight: w, Requests: s.Requests, Succeeded: s.Succeeded, Failed: s.Failed,
		TTFT: s.TTFT, TPOT: s.TPOT, E2E: s.E2E, OutputTokens: s.OutputTokens}
	for class, n := range s.Failures {
		if f.Failures == nil {
			f.Failures = map[string]int{}
		}
		f.Failures[string(class)] = n
	}
	return f
}

// ModelJSON is one model name's figures as the ledger's model_mix column and
// summary.json's models section write them, each in the unit its key ends in (the CSV
// header's names); null is not measured.
type ModelJSON struct {
	Model        string         `json:"model"`
	Weight       float64        `json:"weight"`
	Requests     int            `json:"requests"`
	Succeeded    int            `json:"succeeded"`
	Failed       int            `json:"failed"`
	Failures     map[string]int `json:"failures_by_class,omitempty"`
	TTFTP50      *json.Number   `json:"ttft_p50_s"`
	TTFTP99      *json.Number   `json:"ttft_p99_s"`
	TTFTMean     *json.Number   `json:"ttft_mean_s"`
	TPOTP50      *json.Number   `json:"tpot_p50_ms"`
	TPOTP99      *json.Number   `json:"tpot_p99_ms"`
	TPOTMean     *json.Number   `json:"tpot_mean_ms"`
	E2EP50       *json.Number   `json:"e2e_p50_s"`
	E2EP99       *json.Number   `json:"e2e_p99_s"`
	E2EMean      *json.Number   `json:"e2e_mean_s"`
	OutputTokens int            `json:"output_tokens"`
}

// JSON is f as ModelJSON.
func (f ModelFigures) JSON() ModelJSON {
	return ModelJSON{Model: f.Name, Weight: f.Weight, Requests: f.Requests, Succeeded: f.Succeeded, Failed: f.Failed,
		Failures: f.Failures,
		TTFTP50:  figure(f.TTFT.P50, 0), TTFTP99: figure(f.TTFT.P99, 0), TTFTMean: figure(f.TTFT.Mean, 0),
		TPOTP50: figure(f.TPOT.P50, 3), TPOTP99: figure(f.TPOT.P99, 3), TPOTMean: figure(f.TPOT.Mean, 3),
		E2EP50: figure(f.E2E.P50, 0), E2EP99: figure(f.E2E.P99, 0), E2EMean: figure(f.E2E.Mean, 0),
		OutputTokens: f.OutputTokens}
}

// figures reads ModelJSON back; the percentiles the JSON does not keep are NaN.
func (j ModelJSON) figures() ModelFigures {
	d := func(p50, p99, mean *json.Number, p int) stats.Dist {
		x := stats.NewDist(nil)
		x.P50, x.P99, x.Mean = unfigure(p50, p), unfigure(p99, p), unfigure(mean, p)
		return x
	}
	return ModelFigures{Name: j.Model, Weight: j.Weight, Requests: j.Requests, Succeeded: j.Succeeded, Failed: j.Failed,
		Failures: j.Failures, TTFT: d(j.TTFTP50, j.TTFTP99, j.TTFTMean, 0), TPOT: d(j.TPOTP50, j.TPOTP99, j.TPOTMean, 3),
		E2E: d(j.E2EP50, j.E2EP99, j.E2EMean, 0), OutputTokens: j.OutputTokens}
}

// modelMixColumn is the model_mix column: Row.Models as a JSON array, empty without a
// mix. A value that is not a JSON array (the first mix format, a line of text, written
// for a few hours before this one) is read as no per-model figures rather than refusing
// the whole ledger.
func modelMixColumn() column {
	return column{"model_mix",
		func(r *Row) string {
			if len(r.Models) == 0 {
				return ""
			}
			out := make([]ModelJSON, len(r.Models))
			for i, m := range r.Models {
				out[i] = m.JSON()
			}
			b, _ := json.Marshal(out) // plain values: cannot fail
			return string(b)
		},
		func(r *Row, s string) error {
			r.Models = nil
			if !strings.HasPrefix(s, "[") {
				return nil
			}
			var in []ModelJSON
			if err := json.Unmarshal([]byte(s), &in); err != nil {
				return err
			}
			for _, j := range in {
				r.Models = append(r.Models, j.figures())
			}
			return nil
		}, kindText}
}

// MixFigures are one mix row's per-model figures in summary.json.
type MixFigures struct {
	CellID      string      `json:"cell_id"`
	Concurrency int         `json:"concurrency"`
	RequestRate float64     `json:"request_rate,omitempty"`
	Models      []ModelJSON `json:"models"`
}

// mixFigures are the per-model figures of the rows of model mixes.
func mixFigures(rows []Row) []MixFigures {
	var out []MixFigures
	for _, r := range rows {
		if len(r.Models) == 0 {
			continue
		}
		f := MixFigures{CellID: r.CellID, Concurrency: r.Concurrency, RequestRate: r.RequestRate}
		for _, m := range r.Models {
			f.Models = append(f.Models, m.JSON())
		}
		out = append(out, f)
	}
	return out
}
