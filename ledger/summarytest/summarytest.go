// Package summarytest checks a summary.json in tests: that it validates against the
// shipped JSON Schema and that its rows hold exactly the CSV's figures. Only tests import
// it, so the validator stays out of the planrun binary.
package summarytest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validate fails t unless summary validates against schema (ledger.SummarySchema).
func Validate(t testing.TB, schema, summary []byte) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("summary.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("summary.schema.json")
	if err != nil {
		t.Fatalf("compile schema: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(summary))
	if err != nil {
		t.Fatalf("summary.json is not JSON: %v", err)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("summary.json does not validate against its schema: %v", err)
	}
}

// MatchesCSV fails t unless the rows of summary are the CSV's rows (header first), every
// field equal once written back as CSV text: numbers as written, null as an empty cell.
func MatchesCSV(t testing.TB, summary, ledger []byte) {
	t.Helper()
	var s struct {
		Rows []map[string]any `json:"rows"`
	}
	dec := json.NewDecoder(bytes.NewReader(summary))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(ledger)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("CSV: %d records, %v", len(recs), err)
	}
	header, recs := recs[0], recs[1:]
	if len(recs) != len(s.Rows) {
		t.Fatalf("summary.json has %d rows, the CSV %d", len(s.Rows), len(recs))
	}
	for i, rec := range recs {
		for j, name := range header {
			v, ok := s.Rows[i][name]
			if !ok {
				t.Fatalf("row %d: column %s missing from summary.json", i, name)
			}
			got := ""
			switch x := v.(type) {
			case json.Number:
				got = x.String()
			case string:
				got = x
			}
			if got != rec[j] {
				t.Errorf("row %d %s: summary.json %q, CSV %q", i, name, got, rec[j])
			}
		}
	}
}
