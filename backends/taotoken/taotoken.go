// Package taotoken measures the TaoToken hosted gateway: the OpenAI protocol with the
// gateway's defaults (base URL, key from TAOTOKEN_API_KEY) and strict fields only, since
// the gateway rejects fields it does not know. It is the openai adapter in strict mode:
// one way to speak the protocol.
package taotoken

import (
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/openai"
)

// DefaultURL is the gateway's OpenAI-compatible base URL.
const DefaultURL = "https://taotoken.net/api/v1"

// DefaultKeyEnv is the variable the key is read from when the plan names none.
const DefaultKeyEnv = "TAOTOKEN_API_KEY"

// Kind declares the taotoken backend kind: the gateway's defaults and strict fields.
// ServerLabel is "vllm" as for every OpenAI-protocol server.
var Kind = backends.Kind{
	Name: "taotoken", DefaultURL: DefaultURL, DefaultKeyEnv: DefaultKeyEnv,
	APIs: []string{"chat", "completions"}, Reasoning: []string{"reasoning_effort"}, ServerLabel: "vllm",
	Endpoints: []string{"/chat/completions", "/completions"}, BasePath: "/v1",
	New: backends.Constructor(New),
}

// New builds the gateway backend, filling the defaults. The model id is checked against
// the gateway's GET /models by Probe, and on a 404 or 400 the error lists the models.
func New(cfg backends.Config, opts ...backends.Option) (*openai.Backend, error) {
	cfg.Kind = "taotoken"
	if cfg.URL == "" {
		cfg.URL = DefaultURL
	}
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = DefaultKeyEnv
	}
	return openai.NewStrict(cfg, opts...)
}
