package ledger

import (
	_ "embed"
	"encoding/json"
	"io"
	"strings"
	"time"
)

// SummarySchema is the JSON Schema (draft 2020-12) that every summary.json validates
// against; a consumer can check a file with it before reading the figures.
//
//go:embed summary.schema.json
var SummarySchema []byte

// SummaryVersion is the schema_version of the summary.json this planrun writes; it
// changes when a field changes meaning or goes away, not when one is added.
const SummaryVersion = 1

// Outcomes of a run in summary.json.
const (
	OutcomeComplete    = "complete"    // every cell ok and every expect block held
	OutcomeFailed      = "failed"      // a cell failed or an expect block did not hold
	OutcomeInterrupted = "interrupted" // stopped by Ctrl-C; resumable
	OutcomeRunning     = "running"     // written while the run goes on
)

// Summary is summary.json: one object per run with the plan, the environment, every
// cell's status and every row with every figure of the CSV, typed, with its unit.
type Summary struct {
	SchemaVersion int    `json:"schema_version"`
	RunID         string `json:"run_id"`
	Outcome       string `json:"outcome"`
	Plan          struct {
		Name  string   `json:"name"`
		Path  string   `json:"path"`
		Hash  string   `json:"hash"`
		Files []string `json:"files,omitempty"` // copies in the run directory
		// Command is the command line that started the run, sensitive -var values redacted.
		Command []string `json:"command,omitempty"`
		// Variables are the resolved values, sensitive ones redacted.
		Variables map[string]string `json:"variables,omitempty"`
	} `json:"plan"`
	Environment    Environment          `json:"environment"`
	Servers        map[string]ServerRun `json:"servers,omitempty"`
	ServerStartup  map[string]string    `json:"server_startup,omitempty"`
	Started        time.Time            `json:"started"`
	Ended          time.Time            `json:"ended,omitzero"`
	Cells          []CellStatus         `json:"cells"`
	ExpectFailures []string             `json:"expect_failures,omitempty"`
	Warnings       []string             `json:"warnings,omitempty"`
	// Columns describe the figures of each row: name (as in the CSV header), JSON type
	// and unit.
	Columns []SummaryColumn `json:"columns"`
	// Rows map each column name to its value: a string, a number, or null where the CSV
	// cell is empty (not measured).
	Rows []map[string]any `json:"rows"`
	// Sessions are the per-turn and per-session figures of the rows of session
	// workloads (those rows' CSV figures are in Rows, as every row's).
	Sessions []SessionFigures `json:"sessions,omitempty"`
	// Models are the per-model figures of the rows of model mixes (those rows' pooled
	// figures are in Rows, as every row's).
	Models []MixFigures `json:"models,omitempty"`
	// Intervals are each measured row's confidence intervals: every distribution's
	// percentiles and mean, the rates and the attainment (the CSV has the shown ones).
	Intervals []RowIntervals `json:"intervals,omitempty"`
	// Decisions are the answers of the plan's decision blocks (the caller sets them).
	Decisions []Decision `json:"decisions,omitempty"`
}

// SummaryColumn describes one figure of a summary row.
type SummaryColumn struct {
	Name string `json:"name"`
	Type string `json:"type"` // string, integer, number or time (RFC 3339)
	Unit string `json:"unit"` // "s", "ms", "tok/s", "GB", "%", ...; empty for text
}

// NewSummary builds the summary of a run from its manifest and rows. name is the plan's
// name; the caller sets Outcome and ExpectFailures.
func NewSummary(name string, m Manifest, rows []Row) Summary {
	s := Summary{SchemaVersion: SummaryVersion, RunID: m.RunID, Outcome: OutcomeRunning,
		Environment: m.Environment, Servers: m.Servers, ServerStartup: m.ServerStartup,
		Started: m.Started, Ended: m.Ended, Cells: m.Cells, Warnings: m.Warnings}
	s.Plan.Name, s.Plan.Path, s.Plan.Hash = name, m.PlanPath, m.PlanHash
	s.Plan.Files, s.Plan.Variables, s.Plan.Command = m.PlanFiles, m.Variables, m.Command
	if s.Cells == nil {
		s.Cells = []CellStatus{}
	}
	for _, c := range columns {
		s.Columns = append(s.Columns, SummaryColumn{Name: c.name, Type: string(c.kind), Unit: columnUnit(c)})
	}
	s.Rows = make([]map[string]any, len(rows))
	for i, r := range rows {
		s.Rows[i] = summaryRow(r)
	}
	s.Sessions = sessionFigures(rows)
	s.Models = mixFigures(rows)
	s.Intervals = rowIntervals(rows)
	return s
}

// summaryRow types each field of the row's CSV record, so summary.json holds exactly the
// CSV's figures: the same formatting, read back as a number.
func summaryRow(r Row) map[string]any {
	rec := r.Record()
	out := make(map[string]any, len(rec))
	for i, c := range columns {
		v := rec[i]
		switch {
		case IsEmbeddings(r) && embeddingsOmits(c.name):
			continue // an embeddings row has no generated tokens: no TTFT, TPOT, ...
		case c.kind == kindText:
			out[c.name] = v
		case v == "":
			out[c.name] = nil
		case c.kind == kindTime:
			out[c.name] = v
		default:
			out[c.name] = json.Number(v)
		}
	}
	return out
}

// columnUnit reads a column's unit from its name, which ends in it by the ledger's
// convention (ttft_p50_s, tpot_p50_ms, output_tok_s, vram_peak_gb, ...); counts are in
// the things they count.
func columnUnit(c column) string {
	if c.kind != kindNumber && c.kind != kindInteger {
		return ""
	}
	n := strings.TrimSuffix(strings.TrimSuffix(c.name, "_lo"), "_hi")
	for _, u := range []struct{ suffix, unit string }{
		{"_per_mtok", "per Mtok"}, {"_per_hour", "per hour"}, {"_per_kwh", "per kWh"}, {"_w", "W"}, {"_tok_s", "tok/s"}, {"_per_s", "1/s"}, {"requests_s", "1/s"}, {"inputs_s", "inputs/s"}, {"_ms", "ms"}, {"_s", "s"},
		{"inputs", "inputs"}, {"inputs_per_request", "inputs"}, {"_per_input", "tokens"},
		{"_gb", "GB"}, {"_pct", "%"}, {"_j", "J"}, {"_per_joule", "tok/J"}, {"_per_chunk", "tok/chunk"},
		{"tokens", "tokens"}, {"tokens_requested", "tokens"}, {"tokens_actual", "tokens"},
		{"concurrency", "requests in flight"}, {"runs", "runs"},
		{"requests", "requests"}, {"succeeded", "requests"}, {"failed", "requests"}, {"stops", "requests"},
		{"connections", "connections"}, {"_in_flight", "requests in flight"}, {"agents", "agents"},
		{"_nats", "nats"}, {"prompts", "prompts"}, {"_top_logprobs", "tokens"}, {"_tasks", "tasks"}, {"_steps", "steps"},
	} {
		if strings.HasSuffix(n, u.suffix) {
			return u.unit
		}
	}
	return "" // a column named without its unit: TestSummaryUnits says so
}

// WriteSummary writes s as indented JSON.
func WriteSummary(w io.Writer, s Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// ReadSummary reads a summary.json back; numbers in rows stay json.Number, as written.
// A deliberate seam: the reader of the format ledger owns, for tools and tests.
func ReadSummary(r io.Reader) (Summary, error) {
	var s Summary
	dec := json.NewDecoder(r)
	dec.UseNumber()
	return s, dec.Decode(&s)
}
