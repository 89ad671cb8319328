package jsonschema

import (
	"encoding/json"
	"testing"
)

func TestMatch(t *testing.T) {
	schema := `{"type":"object","required":["city"],"additionalProperties":false,
	  "properties":{"city":{"type":"string"},"days":{"type":"integer"},"unit":{"enum":["c","f"]},
	  "tags":{"type":"array","items":{"type":["string","null"]}},"kind":{"const":"x"}}}`
	var s map[string]any
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ value, why string }{
		{`{"city":"Oslo"}`, ""},
		{`{"city":"Oslo","days":3,"unit":"c","tags":["a",null],"kind":"x"}`, ""},
		{`{"days":3}`, `args lacks the required "city"`},
		{`{"city":1}`, `args.city is 1, not of type "string"`},
		{`{"city":"Oslo","days":2.5}`, `args.days is 2.5, not of type "integer"`},
		{`{"city":"Oslo","unit":"k"}`, `args.unit is "k", not one of the schema's enum`},
		{`{"city":"Oslo","tags":["a",3]}`, `args.tags[1] is 3, not of type ["string","null"]`},
		{`{"city":"Oslo","kind":"y"}`, `args.kind is "y", not the schema's const "x"`},
		{`{"city":"Oslo","extra":true}`, `args has "extra", which the schema does not allow`},
		{`[1]`, `args is [1], not of type "object"`},
	}
	for _, tt := range tests {
		var v any
		if err := json.Unmarshal([]byte(tt.value), &v); err != nil {
			t.Fatal(err)
		}
		if got := Match(v, s, "args"); got != tt.why {
			t.Errorf("%s: %q, want %q", tt.value, got, tt.why)
		}
	}
	if got := Match(map[string]any{"a": 1}, nil, "args"); got != "" {
		t.Errorf("nil schema: %q", got)
	}
}
