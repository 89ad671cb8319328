package mockserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// embeddingsHandler serves OpenAI's POST /v1/embeddings (ollama false) or Ollama's POST
// /api/embed: each input string gets a 4-number vector, after TTFT plus
// PrefillPerToken for every input word (the mock's tokens), and the answer counts the
// input words as its input tokens (usage.prompt_tokens, Ollama's prompt_eval_count).
func (s *Server) embeddingsHandler(ollama bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !ollama && s.cfg.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.APIKey {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "Unauthorized"})
			return
		}
		var req struct {
			Model string          `json:"model"`
			Input json.RawMessage `json:"input"`
		}
		var inputs []string
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("bad request: %v", err)})
			return
		}
		if json.Unmarshal(req.Input, &inputs) != nil {
			var one string
			json.Unmarshal(req.Input, &one)
			inputs = []string{one}
		}
		if !s.modelKnown(req.Model) {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model %q not found (available: %s)", req.Model, strings.Join(s.modelNames(), ", "))})
			return
		}
		release, ok := s.admit(r.Context())
		if !ok {
			return
		}
		defer release()
		tokens := 0
		for _, in := range inputs {
			tokens += countWords(in)
		}
		s.requests.Add(1)
		s.promptTok.Add(int64(tokens))
		time.Sleep(s.cfg.TTFT + time.Duration(tokens)*s.cfg.PrefillPerToken)
		vectors := make([][]float64, len(inputs))
		for i := range vectors {
			vectors[i] = []float64{0.5, -0.25, 0.125, float64(i)}
		}
		if ollama {
			writeJSON(w, http.StatusOK, map[string]any{"model": req.Model, "embeddings": vectors, "prompt_eval_count": tokens})
			return
		}
		data := make([]map[string]any, len(vectors))
		for i, v := range vectors {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "model": req.Model, "data": data,
			"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
	}
}
