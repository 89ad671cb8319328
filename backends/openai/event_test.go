package openai

import (
	"errors"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/jsonscan"
)

// parseEvent on Responses events the recordings lack: a null or broken event, the
// reasoning deltas, an incomplete response (either way a server says so), failures with
// and without a message, and the response's id only when asked for and a string.
func TestParseEventEvents(t *testing.T) {
	type got struct {
		Text, Reasoning, Output, ReasoningTokens int
		Finish                                   string
		Done                                     bool
		ID                                       string
	}
	for _, c := range []struct {
		name, data string
		class      backends.ErrorClass
		msg        string
		want       got
	}{
		{"null event", `null`, backends.ErrMalformed, `malformed chunk (null event): "null"`, got{}},
		{"not json", `{"type":`, backends.ErrMalformed, "", got{}},
		{"text", `{"type":"response.output_text.delta","delta":"abcd"}`, "", "", got{Text: 4}},
		{"reasoning text", `{"type":"response.reasoning_text.delta","delta":"hm"}`, "", "", got{Reasoning: 2}},
		{"reasoning summary", `{"type":"response.reasoning_summary_text.delta","delta":"sum"}`, "", "", got{Reasoning: 3}},
		{"reasoning", `{"type":"response.reasoning.delta","delta":"r"}`, "", "", got{Reasoning: 1}},
		{"completed", `{"type":"response.completed","response":{"id":"r1","status":"completed","usage":{"input_tokens":3,"output_tokens":8,"output_tokens_details":{"reasoning_tokens":2}}}}`,
			"", "", got{Output: 8, ReasoningTokens: 2, Finish: "stop", Done: true, ID: "r1"}},
		{"completed, incomplete", `{"type":"response.completed","response":{"status":"incomplete"}}`, "", "", got{Finish: "length", Done: true}},
		{"incomplete", `{"type":"response.incomplete","response":{"status":"incomplete"}}`, "", "", got{Finish: "length", Done: true}},
		{"id not a string", `{"type":"response.created","response":{"id":7}}`, "", "", got{}},
		{"response not an object", `{"type":"response.created","response":null}`, "", "", got{}},
		{"failed", `{"type":"response.failed","response":{"error":{"message":"engine died"}}}`, backends.ErrServer,
			"the server reported an error mid-stream: engine died", got{}},
		{"failed, error not an object", `{"type":"response.failed","response":{"error":"x"}}`, backends.ErrServer,
			"the server reported an error mid-stream: ", got{}},
		{"error event", `{"type":"error","message":"rate limited"}`, backends.ErrServer,
			"the server reported an error mid-stream: rate limited", got{}},
	} {
		var sc jsonscan.Scanner
		var ch backends.Chunk
		id := ""
		err := parseEvent(&sc, []byte(c.data), &ch, &id)
		var e *backends.Error
		switch {
		case c.class == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.class != "" && (!errors.As(err, &e) || e.Class != c.class || c.msg != "" && e.Message != c.msg):
			t.Errorf("%s: %v, want class %s %q", c.name, err, c.class, c.msg)
		case c.class == "":
			g := got{ch.Text, ch.Reasoning, ch.OutputTokens, ch.ReasoningTokens, ch.FinishReason, ch.Done, id}
			if g != c.want {
				t.Errorf("%s: %+v, want %+v", c.name, g, c.want)
			}
		}
	}
	var sc jsonscan.Scanner
	if err := parseEvent(&sc, []byte(`{"type":"response.created","response":{"id":"r1"}}`), new(backends.Chunk), nil); err != nil {
		t.Errorf("an id nobody asked for: %v", err)
	}
}
