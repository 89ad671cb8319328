package plan

import (
	"fmt"
	"strings"
)

// engineProtocols maps the serving engines and gateways people name as a backend's kind
// to the protocol planrun speaks to them: a backend's kind is the API, not the engine.
var engineProtocols = map[string]string{
	"vllm": "openai", "sglang": "openai", "llamacpp": "openai", "llama.cpp": "openai",
	"llama-cpp": "openai", "llama-server": "openai", "lmdeploy": "openai", "tgi": "openai",
	"trtllm": "openai", "trt-llm": "openai", "tensorrt-llm": "openai", "litellm": "openai",
	"lmstudio": "openai", "localai": "openai", "deepseek": "openai", "qwen": "openai",
	"claude": "anthropic", "messages": "anthropic",
}

// kindSuggestion is the did-you-mean for an unknown backend kind: the protocol an
// engine's name stands for, else the nearest kind.
func kindSuggestion(kind string) string {
	if p, ok := engineProtocols[strings.ToLower(kind)]; ok {
		return fmt.Sprintf(" A backend's kind is the API planrun speaks, not the engine: %s serves %s's, so write backend %q with the server's url.", kind, p, p)
	}
	return suggestion(kind, kindNames())
}
