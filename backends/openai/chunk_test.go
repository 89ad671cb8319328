package openai

import (
	"errors"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/jsonscan"
)

// parseChunk on events the recorded streams do not hold: a null or non-object event,
// errors as a string, an object or neither, the reasoning tokens of usage, each finish
// reason, and text in a completion's "text" and a whole "message".
func TestParseChunkEvents(t *testing.T) {
	type got struct {
		Text, Reasoning, Output, ReasoningTokens int
		Finish, Content                          string
	}
	for _, c := range []struct {
		name, data string
		class      backends.ErrorClass
		msg        string
		want       got
	}{
		{"null event", `null`, backends.ErrMalformed, `malformed chunk (null event): "null"`, got{}},
		{"not json", `{"choices":`, backends.ErrMalformed, "", got{}},
		{"error string", `{"error":"overloaded"}`, backends.ErrServer, "the server reported an error mid-stream: overloaded", got{}},
		{"error object", `{"error":{"code":3,"message":"out of memory"}}`, backends.ErrServer,
			"the server reported an error mid-stream: out of memory", got{}},
		{"error object, message not a string", `{"error":{"message":7}}`, backends.ErrServer, "the server reported an error mid-stream: ", got{}},
		{"error neither", `{"error":42}`, backends.ErrServer, "the server reported an error mid-stream: ", got{}},
		{"reasoning tokens", `{"usage":{"prompt_tokens":3,"completion_tokens":9,"completion_tokens_details":{"x":1,"reasoning_tokens":4}}}`, "", "",
			got{Output: 9, ReasoningTokens: 4}},
		{"usage details null", `{"usage":{"completion_tokens":2,"completion_tokens_details":null}}`, "", "", got{Output: 2}},
		{"tool_calls", `{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, "", "", got{Finish: "tool_calls"}},
		{"content_filter", `{"choices":[{"finish_reason":"content_filter"}]}`, "", "", got{Finish: "content_filter"}},
		{"abort", `{"choices":[{"finish_reason":"abort"}]}`, "", "", got{Finish: "abort"}},
		{"another reason, escaped", `{"choices":[{"finish_reason":"e\u006fs"}]}`, "", "", got{Finish: "eos"}},
		{"completion text", `{"choices":[{"text":"abc","finish_reason":null}]}`, "", "", got{Text: 3, Content: "abc"}},
		{"whole message", `{"choices":[{"message":{"content":"hello","reasoning_content":"hm","reasoning":"x"}}]}`, "", "",
			got{Text: 5, Reasoning: 3, Content: "hello"}},
		{"choice not an object", `{"choices":[7]}`, backends.ErrMalformed, "", got{}},
		{"delta not an object", `{"choices":[{"delta":null}]}`, "", "", got{}},
	} {
		var sc jsonscan.Scanner
		var ch backends.Chunk
		err := parseChunk(&sc, []byte(c.data), &ch, nil)
		var e *backends.Error
		switch {
		case c.class == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.class != "" && (!errors.As(err, &e) || e.Class != c.class || c.msg != "" && e.Message != c.msg):
			t.Errorf("%s: %v, want class %s %q", c.name, err, c.class, c.msg)
		case c.class == "":
			g := got{ch.Text, ch.Reasoning, ch.OutputTokens, ch.ReasoningTokens, ch.FinishReason, string(ch.Content)}
			if g != c.want {
				t.Errorf("%s: %+v, want %+v", c.name, g, c.want)
			}
		}
	}
}
