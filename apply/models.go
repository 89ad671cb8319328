package apply

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/report"
)

// showTimeout bounds /api/show and /api/tags: both answer from the server's own disk.
const showTimeout = 30 * time.Second

// errModelMissing is /api/show's 404: the server does not have the model.
var errModelMissing = errors.New("model not found")

// ensureModel makes sure an Ollama cell's model is on the server before anything is
// measured, as the backend's ensure_model says: "check" fails the cell with the command
// that gets the model, "pull" pulls it (progress as notes), "off" does nothing. It
// records the model's digest, parameter size and quantization level in the manifest.
// Other backend kinds have no model API to ask, so they pass through.
func (a *applier) ensureModel(ctx context.Context, cell *plan.Cell) error {
	be := cell.Backend
	if be.Kind != "ollama" || be.EnsureModel == "" || be.EnsureModel == plan.EnsureModelOff {
		return nil
	}
	mc := newModelClient(be)
	id := cell.ModelID
	info, err := mc.show(ctx, id)
	if errors.Is(err, errModelMissing) {
		if be.EnsureModel != plan.EnsureModelPull {
			return missingModelError(cell)
		}
		a.note("%s: model %q is not on %s; pulling it (ensure_model = \"pull\")", cell.ID, id, be.URL)
		began := time.Now()
		if err := mc.pull(ctx, id, func(msg string) { a.note("%s: pull %s: %s", cell.ID, id, msg) }); err != nil {
			return fmt.Errorf("pulling model %q into the Ollama server at %s: %w", id, be.URL, err)
		}
		a.note("%s: pulled %q in %s", cell.ID, id, time.Since(began).Round(time.Millisecond))
		info, err = mc.show(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("checking model %q on the Ollama server at %s: %w", id, be.URL, err)
	}
	// The digest is only in the listing; a server that cannot list still measures.
	if digest, name, err := mc.digest(ctx, id); err != nil {
		a.note("%s: model %q: no digest from /api/tags: %v", cell.ID, id, err)
	} else {
		info.Digest, info.Name = digest, name
	}
	key := be.Addr + " " + id
	if a.manifest.Models == nil {
		a.manifest.Models = map[string]report.ModelInfo{}
	}
	a.manifest.Models[key] = info
	if info.Digest != "" {
		if a.manifest.ModelDigests == nil {
			a.manifest.ModelDigests = map[string]string{}
		}
		a.manifest.ModelDigests[key] = info.Digest
	}
	a.note("%s: model %s", cell.ID, info)
	return nil
}

// modelNote is the row note naming the model a cell measured ("model tiny:latest
// sha256:…, 1.2M params, F16, llama"), empty when ensureModel recorded none.
func (a *applier) modelNote(cell *plan.Cell) string {
	info, ok := a.manifest.Models[cell.Backend.Addr+" "+cell.ModelID]
	if !ok {
		return ""
	}
	return "model " + info.String()
}

// missingModelError says which model is missing where, and the ways to get it.
func missingModelError(cell *plan.Cell) error {
	id, be := cell.ModelID, cell.Backend
	where := "the server's setup"
	if cell.Server != nil {
		where = fmt.Sprintf("server %q's setup", cell.Server.Name)
	}
	return fmt.Errorf("model %q is not on the Ollama server at %s: get it with `ollama pull %s` "+
		"(or `ollama create %s -f Modelfile` for a local GGUF, e.g. in %s), "+
		"or set ensure_model = \"pull\" on backend %s to have planrun pull it", id, be.URL, id, id, where, be.Addr)
}

// modelClient speaks the three Ollama model endpoints apply needs. It is plain net/http
// over the api package's types because api.Client's stream ignores a cut-off body and
// reads OLLAMA_* settings from planrun's environment.
type modelClient struct {
	base    string
	headers map[string]string
	key     string
	http    *http.Client
}

func newModelClient(be *plan.Backend) *modelClient {
	mc := &modelClient{base: strings.TrimRight(be.URL, "/"), headers: be.Headers, http: &http.Client{}}
	if be.APIKeyEnv != "" {
		mc.key = os.Getenv(be.APIKeyEnv)
	}
	return mc
}

func (c *modelClient) request(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		msg := serverMessage(resp.Body)
		if resp.StatusCode == http.StatusNotFound && path == "/api/show" {
			return nil, fmt.Errorf("%w: %s", errModelMissing, msg)
		}
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, msg)
	}
	return resp, nil
}

// serverMessage is Ollama's {"error": "..."} text, or the start of whatever body came.
func serverMessage(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 4<<10))
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return e.Error
	}
	return strings.TrimSpace(string(b))
}

// show returns the model's details (/api/show), or errModelMissing.
func (c *modelClient) show(ctx context.Context, model string) (report.ModelInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, showTimeout)
	defer cancel()
	resp, err := c.request(ctx, http.MethodPost, "/api/show", api.ShowRequest{Model: model})
	if err != nil {
		return report.ModelInfo{}, err
	}
	defer resp.Body.Close()
	var sr api.ShowResponse
	if err := json.NewDecoder(resp.Body).Decode(&sr); err != nil {
		return report.ModelInfo{}, fmt.Errorf("decoding /api/show: %w", err)
	}
	d := sr.Details
	return report.ModelInfo{Name: model, ParameterSize: d.ParameterSize, QuantizationLevel: d.QuantizationLevel,
		Family: d.Family, Format: d.Format}, nil
}

// digest finds the model in /api/tags, where "tiny" is listed as "tiny:latest".
func (c *modelClient) digest(ctx context.Context, model string) (digest, name string, err error) {
	ctx, cancel := context.WithTimeout(ctx, showTimeout)
	defer cancel()
	resp, err := c.request(ctx, http.MethodGet, "/api/tags", nil)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	var lr api.ListResponse
	if err := json.NewDecoder(resp.Body).Decode(&lr); err != nil {
		return "", "", fmt.Errorf("decoding /api/tags: %w", err)
	}
	for _, m := range lr.Models {
		for _, n := range []string{m.Name, m.Model} {
			if n == model || (!strings.Contains(model, ":") && n == model+":latest") {
				return m.Digest, n, nil
			}
		}
	}
	return "", "", fmt.Errorf("%q is not in the server's list of %d models", model, len(lr.Models))
}

// pull streams /api/pull and tells progress: every new status, and each layer's
// download in steps of a quarter so a big model does not flood the log. It succeeds
// only on the server's final "success": a stream that just stops is an error.
func (c *modelClient) pull(ctx context.Context, model string, progress func(string)) error {
	stream := true
	resp, err := c.request(ctx, http.MethodPost, "/api/pull", api.PullRequest{Model: model, Stream: &stream})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var (
		lastStatus string
		shown      = map[string]int64{} // layer digest → last quarter told
	)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var p struct {
			api.ProgressResponse
			Error string `json:"error"`
		}
		if err := json.Unmarshal(line, &p); err != nil {
			return fmt.Errorf("reading the pull stream: %w (line %q)", err, truncate(string(line), 200))
		}
		if p.Error != "" {
			return errors.New(p.Error)
		}
		if p.Status == "success" {
			progress("success")
			return nil
		}
		if p.Digest != "" && p.Total > 0 {
			q := p.Completed * 4 / p.Total
			if last, ok := shown[p.Digest]; !ok || q > last {
				shown[p.Digest] = q
				progress(fmt.Sprintf("%s %s %d%% of %.1f MB", p.Status, shortDigest(p.Digest), q*25, float64(p.Total)/1e6))
			}
			lastStatus = p.Status
			continue
		}
		if p.Status != lastStatus {
			progress(p.Status)
			lastStatus = p.Status
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the pull stream: %w", err)
	}
	return fmt.Errorf("the pull stream ended before \"success\" (last status %q)", lastStatus)
}

func shortDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	if len(d) > 12 {
		d = d[:12]
	}
	return d
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
