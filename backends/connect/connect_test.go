package connect

import (
	"testing"

	"github.com/planrun/planrun/backends"
)

func TestNew(t *testing.T) {
	tests := []struct {
		cfg     backends.Config
		kind    string
		wantErr bool
	}{
		{backends.Config{Kind: "ollama", Name: "ollama.local", URL: "http://127.0.0.1:11434"}, "ollama", false},
		{backends.Config{Kind: "openai", Name: "openai.vllm", URL: "http://127.0.0.1:8000/v1"}, "openai", false},
		{backends.Config{Kind: "taotoken", Name: "taotoken.gw"}, "taotoken", false},
		{backends.Config{Kind: "tgi", Name: "tgi.x", URL: "http://x"}, "", true},
		{backends.Config{Kind: "openai", Name: "openai.bad", URL: "not a url"}, "", true},
	}
	for _, tt := range tests {
		b, err := New(tt.cfg)
		if (err != nil) != tt.wantErr {
			t.Errorf("New(%s): err %v", tt.cfg.Name, err)
			continue
		}
		if err == nil && (b.Kind() != tt.kind || b.Name() != tt.cfg.Name) {
			t.Errorf("New(%s) = %s %s", tt.cfg.Name, b.Kind(), b.Name())
		}
	}
}
