package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/backends"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Backend is a `backend "<kind>" "<name>"` block: a server planrun sends requests to.
type Backend struct {
	Kind, Name string
	// Addr is "<kind>.<name>", the backend's name in cell ids and results.
	Addr string
	// URL is the base URL; for openai and taotoken it includes /v1.
	URL string
	// API is the endpoint family: ollama chat|generate, openai/taotoken chat|completions.
	API string
	// APIKeyEnv names the environment variable holding the key (never the key).
	APIKeyEnv string
	// KeyHeader is how the key is sent (backends.KeyBearer, backends.KeyXAPIKey): the
	// api_key_header of a kind that has a choice.
	KeyHeader        string
	Headers          map[string]string
	ExtraFields      map[string]any
	EngineExtensions bool
	KeepAlive        string
	// EnsureModel is what apply does about a model the Ollama server lacks: "check" (fail
	// the cell, saying how to get it), "pull" (pull it, then measure) or "off". Empty for
	// other kinds.
	EnsureModel string
	Timeouts    backends.Timeouts
	// Server is the plan-managed server this backend talks to, if any.
	Server *Server
	// Price is the backend's price list per million tokens; nil when the plan gives none.
	Price     *Price
	DeclRange hcl.Range
	// urlAt is where the url is given, for a port its server does not listen on;
	// extraAt where extra_fields are, for a setting that overrides the hardware's pins.
	urlAt, extraAt hcl.Range
}

// Config is what the backends package needs, with no HCL in it.
func (b *Backend) Config() backends.Config {
	return backends.Config{
		Kind:             b.Kind,
		Name:             b.Addr,
		URL:              b.URL,
		API:              b.API,
		APIKeyEnv:        b.APIKeyEnv,
		KeyHeader:        b.KeyHeader,
		Headers:          b.Headers,
		ExtraFields:      b.ExtraFields,
		EngineExtensions: b.EngineExtensions,
		KeepAlive:        b.KeepAlive,
		Timeouts:         b.Timeouts,
	}
}

func (b *Backend) object() cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"ref":  cty.StringVal("backend." + b.Addr),
		"kind": cty.StringVal(b.Kind),
		"name": cty.StringVal(b.Name),
		"addr": cty.StringVal(b.Addr),
		"url":  cty.StringVal(b.URL),
		"api":  cty.StringVal(b.API),
	})
}

// kindNames are the backend kinds a plan may use: the kinds registered with package
// backends (backends/connect registers the adapters'), so plan compiles no adapter.
func kindNames() []string { return backends.KindNames() }

// secretAttributes are names people give a literal key. They are in the schema only so
// that a literal key gets a clear error instead of "unsupported argument".
var secretAttributes = []string{"api_key", "apikey", "key", "token", "access_token", "auth_token", "secret", "password", "authorization", "bearer"}

// secretHeaders carry credentials; their value would be a literal key in the plan.
var secretHeaders = []string{"authorization", "proxy-authorization", "x-api-key", "api-key"}

const literalKeyDetail = "A plan is meant to be committed and shared, so it never holds a key. Name an environment variable in api_key_env instead (for example api_key_env = \"OPENAI_API_KEY\"); planrun reads the key from it and sends it as Authorization: Bearer."

var backendSchema = func() *hcl.BodySchema {
	s := &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "url"}, {Name: "api"}, {Name: "api_key_env"}, {Name: "headers"}, {Name: "extra_fields"},
			{Name: "engine_extensions"}, {Name: "keep_alive"}, {Name: "ensure_model"}, {Name: "server"},
			{Name: "api_key_header"},
		},
		Blocks: []hcl.BlockHeaderSchema{{Type: "timeouts"}, {Type: "price"}},
	}
	for _, n := range secretAttributes {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: n})
	}
	return s
}()

// The ensure_model modes of an ollama backend.
const (
	EnsureModelCheck = "check"
	EnsureModelPull  = "pull"
	EnsureModelOff   = "off"
)

var ensureModelModes = []string{EnsureModelCheck, EnsureModelPull, EnsureModelOff}

const ensureModelDetail = "before measuring a cell, apply asks the server for the model (/api/show); with \"check\" (the default) a missing model fails the cell with the command that gets it (ollama pull NAME, or ollama create NAME -f Modelfile in the server's setup), with \"pull\" apply pulls it from the registry first, and \"off\" skips the check (for a proxy without /api/show)."

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (l *loader) decodeBackendBlock(b *hcl.Block, ctx *hcl.EvalContext) *Backend {
	kind, name := b.Labels[0], b.Labels[1]
	rules, known := backends.LookupKind(kind)
	if !known || !validName(name) {
		return nil // reported by declare
	}
	for _, prev := range l.p.Backends {
		if prev.Kind == kind && prev.Name == name {
			return nil // duplicate, reported by declare
		}
	}
	be := &Backend{Kind: kind, Name: name, Addr: kind + "." + name, DeclRange: b.DefRange}
	content, diags := b.Body.Content(backendSchema)
	l.add(diags)
	before := len(l.diags)
	attrs := content.Attributes

	for _, n := range secretAttributes {
		if a := attrs[n]; a != nil {
			l.errorf(a.NameRange.Ptr(), "Literal API key in plan", "%s", literalKeyDetail)
		}
	}

	be.URL = rules.DefaultURL
	if a := attrs["url"]; !isNull(a, ctx) {
		be.urlAt = a.Expr.Range()
		if l.decode(a, ctx, &be.URL) {
			if u, ok := httpURL(be.URL); !ok {
				l.errorf(a.Expr.Range().Ptr(), "Invalid backend URL", "url must be an http:// or https:// URL with a host, not %q.%s", be.URL, urlSuggestion(be.URL))
			} else if u.User != nil {
				l.errorf(a.Expr.Range().Ptr(), "Literal API key in plan", "The URL carries credentials. %s", literalKeyDetail)
			} else if e, base := endpointInURL(be.URL, rules.Endpoints); e != "" {
				l.errorf(a.Expr.Range().Ptr(), "Backend URL names an endpoint",
					"url is the server's base URL: planrun adds %s itself, so %q would send to %s%s. Did you mean %q?", e, be.URL, strings.TrimRight(be.URL, "/"), e, base)
			} else if p := strings.TrimRight(u.Path, "/"); rules.BasePath != "" && !strings.HasSuffix(p, rules.BasePath) {
				l.add(hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Backend URL without " + rules.BasePath,
					Detail: fmt.Sprintf("%s backend's url is the base its OpenAI API is served under, which ends in %s on vLLM, SGLang, llama.cpp and Ollama; %q does not. Did you mean %q?",
						upperFirst(article(kind)), rules.BasePath, be.URL, strings.TrimRight(be.URL, "/")+rules.BasePath),
					Subject: a.Expr.Range().Ptr()}})
			}
			be.URL = strings.TrimRight(be.URL, "/")
		}
	} else if rules.URLRequired {
		detail := fmt.Sprintf("A %s backend needs url, the base URL including /v1 (for example \"http://127.0.0.1:8000/v1\").", kind)
		if a != nil { // url = null, or a conditional that gives null with the values given
			l.errorIn(a.Expr, ctx, a.Expr.Range().Ptr(), "Missing url", "url evaluates to null with the values given. %s", detail)
		} else {
			l.errorf(b.DefRange.Ptr(), "Missing url", "%s", detail)
		}
	}

	be.API = rules.APIs[0]
	if a := attrs["api"]; a != nil && l.decode(a, ctx, &be.API) && !slices.Contains(rules.APIs, be.API) {
		l.errorf(a.Expr.Range().Ptr(), "Invalid api", "%s backend's api is %s, not %q.%s", upper(article(kind)), quoteList(rules.APIs), be.API, suggestion(be.API, rules.APIs))
		be.API = "" // unknown: the checks of what a cell's endpoint takes skip it
	}

	be.APIKeyEnv = rules.DefaultKeyEnv
	if a := attrs["api_key_env"]; a != nil && l.decode(a, ctx, &be.APIKeyEnv) && !envNameRE.MatchString(be.APIKeyEnv) {
		l.errorf(a.Expr.Range().Ptr(), "Invalid api_key_env",
			"api_key_env names an environment variable (letters, digits, underscores); the value given looks like something else, perhaps the key itself. %s", literalKeyDetail)
		be.APIKeyEnv = ""
	}

	if a := attrs["headers"]; a != nil && l.decode(a, ctx, &be.Headers) {
		for _, h := range slices.Sorted(maps.Keys(be.Headers)) {
			if slices.Contains(secretHeaders, strings.ToLower(h)) {
				l.errorf(keyRange(a.Expr, h), "Literal API key in plan", "The header %q would put a credential in the plan. %s", h, literalKeyDetail)
			}
		}
	}

	l.decodeKindArguments(attrs, ctx, rules, be)
	decodeKeyHeader(l, attrs, ctx, rules, be)

	if a := attrs["server"]; a != nil {
		be.Server = l.serverRef(a.Expr, ctx, scopePlan)
	}

	for _, tb := range content.Blocks {
		if tb.Type == "price" {
			pr, diags := decodePriceBlock(tb, ctx, "backend")
			l.add(diags)
			be.Price = pr
			continue
		}
		l.decodeTimeouts(tb, ctx, &be.Timeouts)
	}
	if hasErrorsSince(l.diags, before) {
		return standIn(l, be)
	}
	return be
}

// decodeKindArguments decodes the arguments only some kinds take (extra_fields,
// engine_extensions, keep_alive, ensure_model), as the kind's declaration allows.
func (l *loader) decodeKindArguments(attrs hcl.Attributes, ctx *hcl.EvalContext, rules backends.Kind, be *Backend) {
	kind := be.Kind
	if a := attrs["extra_fields"]; a != nil {
		be.extraAt = a.Expr.Range()
		if !rules.ExtraFields {
			l.errorf(a.NameRange.Ptr(), "Unsupported argument", "A %s backend is strict: the gateway rejects request fields it does not know, so extra_fields is not allowed.", kind)
		} else if v, ok := l.eval(a.Expr, ctx, scopePlan); ok {
			if !v.Type().IsObjectType() && !v.Type().IsMapType() {
				l.errorf(a.Expr.Range().Ptr(), "Invalid extra_fields", "extra_fields is an object of request fields, such as { top_p = 0.9 }.")
			} else if js, err := ctyjson.Marshal(v, v.Type()); err == nil {
				_ = json.Unmarshal(js, &be.ExtraFields)
				for _, k := range slices.Sorted(maps.Keys(be.ExtraFields)) {
					if slices.Contains(rules.ReservedFields, k) {
						l.errorf(keyRange(a.Expr, k), "Reserved request field",
							"extra_fields may not set %q: planrun sets %s itself, from the cell and the workload (the model from model_id, the output length from max_tokens).", k, quoteList(rules.ReservedFields))
					}
				}
			}
		}
	}

	if a := attrs["engine_extensions"]; a != nil {
		if !rules.EngineExtensions {
			l.errorf(a.NameRange.Ptr(), "Unsupported argument", "engine_extensions (vLLM/SGLang's ignore_eos and min_tokens) applies to openai backends only, not %s.", kind)
		} else {
			l.decode(a, ctx, &be.EngineExtensions)
		}
	}

	if a := attrs["keep_alive"]; a != nil {
		if !rules.KeepAlive {
			l.errorf(a.NameRange.Ptr(), "Unsupported argument", "keep_alive is Ollama's setting; a %s backend does not take it.", kind)
		} else if l.decode(a, ctx, &be.KeepAlive) {
			if _, err := time.ParseDuration(be.KeepAlive); err != nil && be.KeepAlive != "-1" && be.KeepAlive != "0" {
				l.errorf(a.Expr.Range().Ptr(), "Invalid keep_alive", "keep_alive is a duration such as \"5m\", or \"-1\" to keep the model loaded, not %q.%s", be.KeepAlive, durationSuggestion(be.KeepAlive))
			}
		}
	}

	if rules.EnsureModel {
		be.EnsureModel = EnsureModelCheck
	}
	if a := attrs["ensure_model"]; a != nil {
		if !rules.EnsureModel {
			l.errorf(a.NameRange.Ptr(), "Unsupported argument", "ensure_model uses Ollama's /api/show and /api/pull; a %s backend does not take it (planrun probe lists the models such a server has).", kind)
		} else if l.decode(a, ctx, &be.EnsureModel) && !slices.Contains(ensureModelModes, be.EnsureModel) {
			l.errorf(a.Expr.Range().Ptr(), "Invalid ensure_model", "ensure_model is %s, not %q: %s%s",
				quoteList(ensureModelModes), be.EnsureModel, ensureModelDetail, suggestion(be.EnsureModel, ensureModelModes))
		}
	}
}

// serverRef resolves an expression that names a server (server.<name>), reporting a
// value that is not one. A nil result with no new error means "no server".
func (l *loader) serverRef(expr hcl.Expression, ctx *hcl.EvalContext, s scope) *Server {
	v, ok := l.eval(expr, ctx, s)
	if !ok {
		return nil
	}
	name, ok := refName(v, "server.")
	if !ok {
		l.errorf(expr.Range().Ptr(), "Invalid server reference", "server takes a server block reference such as server.vllm.")
		return nil
	}
	for _, srv := range l.p.Servers {
		if srv.Name == name {
			return srv
		}
	}
	l.errorf(expr.Range().Ptr(), "Reference to undeclared server", "No server %q is declared.%s", name, suggestion(name, slices.Sorted(maps.Keys(l.names.servers))))
	return nil
}

var timeoutsSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "connect"}, {Name: "first_token"}, {Name: "idle"}, {Name: "total"}},
}

// decodeTimeouts decodes a timeouts block into t; each phase is a duration string.
func (l *loader) decodeTimeouts(b *hcl.Block, ctx *hcl.EvalContext, t *backends.Timeouts) {
	content, diags := b.Body.Content(timeoutsSchema)
	l.add(diags)
	for name, dst := range map[string]*time.Duration{"connect": &t.Connect, "first_token": &t.FirstToken, "idle": &t.Idle, "total": &t.Total} {
		if a := content.Attributes[name]; a != nil {
			l.duration(a, ctx, dst)
		}
	}
}

// duration decodes a duration string such as "30s" or "2m" into dst.
func (l *loader) duration(a *hcl.Attribute, ctx *hcl.EvalContext, dst *time.Duration) bool {
	var s string
	if !l.decode(a, ctx, &s) {
		return false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		l.errorf(a.Expr.Range().Ptr(), "Invalid duration", "%s is a duration such as \"30s\" or \"2m\", not %q.%s", a.Name, s, durationSuggestion(s))
		return false
	}
	*dst = d
	return true
}

func hasErrorsSince(diags hcl.Diagnostics, n int) bool {
	return diags[n:].HasErrors()
}
