package backends_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

// fakeBackend answers Do with a scripted sample per model and records the models asked.
type fakeBackend struct {
	samples map[string]backends.Sample
	asked   []string
}

func (f *fakeBackend) Kind() string { return "fake" }
func (f *fakeBackend) Name() string { return "fake.t" }
func (f *fakeBackend) Do(_ context.Context, req backends.Request) backends.Sample {
	f.asked = append(f.asked, req.Model)
	if req.ID != "probe/"+req.Model || req.MaxTokens != 2 || req.Prompt == "" {
		panic(fmt.Sprintf("probe request %+v", req))
	}
	return f.samples[req.Model]
}
func (f *fakeBackend) Probe(context.Context, []string) backends.ProbeResult {
	return backends.ProbeResult{}
}

func TestProbeModels(t *testing.T) {
	usage := backends.Sample{TokenSource: backends.TokensUsage}
	chunks := backends.Sample{TokenSource: backends.TokensChunks}
	refused := func(c backends.ErrorClass) backends.Sample {
		return backends.Sample{Err: &backends.Error{Class: c, Message: "no"}}
	}
	for _, c := range []struct {
		name     string
		samples  map[string]backends.Sample
		have     []string
		want     []string
		present  map[string]bool
		usage    *bool
		problems []string
		refused  backends.ErrorClass
	}{
		{"usage", map[string]backends.Sample{"a": usage, "b": usage}, []string{"a:latest", "b"}, []string{"a", "b"},
			map[string]bool{"a": true, "b": true}, ptr(true), nil, ""},
		// One model without a count makes usage false, whichever comes first.
		{"chunks last", map[string]backends.Sample{"a": usage, "b": chunks}, []string{"a", "b"}, []string{"a", "b"},
			map[string]bool{"a": true, "b": true}, ptr(false), nil, ""},
		{"chunks first", map[string]backends.Sample{"a": chunks, "b": usage}, []string{"a", "b"}, []string{"a", "b"},
			map[string]bool{"a": true, "b": true}, ptr(false), nil, ""},
		{"absent", nil, []string{"tiny:latest"}, []string{"tinyy"},
			map[string]bool{"tinyy": false}, nil,
			[]string{`model "tinyy" is not served at http://x; the server has: tiny:latest. Did you mean "tiny"?`}, ""},
		{"refused", map[string]backends.Sample{"a": refused(backends.ErrForbidden), "b": refused(backends.ErrServer)}, []string{"a", "b"}, []string{"a", "b"},
			map[string]bool{"a": true, "b": true}, nil,
			[]string{`a test request to model "a" failed: 403: no`, `a test request to model "b" failed: 5xx: no`}, backends.ErrForbidden},
		{"unauthorized", map[string]backends.Sample{"a": refused(backends.ErrUnauthorized), "b": usage}, []string{"a", "b"}, []string{"a", "b"},
			map[string]bool{"a": true, "b": true}, ptr(true),
			[]string{`a test request to model "a" failed: 401: no`}, backends.ErrUnauthorized},
	} {
		t.Run(c.name, func(t *testing.T) {
			be := &fakeBackend{samples: c.samples}
			present, usage, problems, refused := backends.ProbeModels(context.Background(), be, c.have, c.want, "http://x")
			if !reflect.DeepEqual(present, c.present) || !reflect.DeepEqual(usage, c.usage) || !reflect.DeepEqual(problems, c.problems) || refused != c.refused {
				t.Fatalf("got %v, usage %v, %q, refused %q\nwant %v, usage %v, %q, refused %q",
					present, show(usage), problems, refused, c.present, show(c.usage), c.problems, c.refused)
			}
			var wantAsked []string
			for _, id := range c.want {
				if c.present[id] {
					wantAsked = append(wantAsked, id)
				}
			}
			if !reflect.DeepEqual(be.asked, wantAsked) {
				t.Fatalf("asked %v, want only the present models %v", be.asked, wantAsked)
			}
		})
	}
}

func ptr(b bool) *bool { return &b }

func show(b *bool) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprint(*b)
}

func TestModelNames(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{{"tiny", "tiny", true}, {"tiny", "tiny:latest", true}, {"tiny:latest", "tiny", true}, {"tiny:q4", "tiny", false}, {"a", "b", false}} {
		if got := backends.SameModel(c.a, c.b); got != c.same {
			t.Errorf("SameModel(%q, %q) = %v", c.a, c.b, got)
		}
	}
	// A listed wildcard (a gateway's route, the mock serving any name) names every model it
	// matches, slashes included; a plain entry only itself.
	for _, c := range []struct {
		list []string
		id   string
		want bool
	}{
		{[]string{"mock", "*"}, "Qwen/Qwen2.5-7B-Instruct", true}, {[]string{"mock"}, "tiny", false},
		{[]string{"tiny:latest"}, "tiny", true}, {[]string{"openai/*"}, "openai/gpt-4o", true},
		{[]string{"openai/*"}, "anthropic/claude", false}, {[]string{"a*b*b"}, "ab", false}, {[]string{"a*b*b"}, "axbyb", true},
		{[]string{"*-lora"}, "tiny-lora", true}, {[]string{"*-lora"}, "tiny-lora-a", false}, {nil, "tiny", false},
	} {
		if got := backends.Lists(c.list, c.id); got != c.want {
			t.Errorf("Lists(%q, %q) = %v", c.list, c.id, got)
		}
	}
	if got := backends.NearestModel("llama3:latest", []string{"llama2:latest", "qwen:latest"}); got != ` Did you mean "llama2"?` {
		t.Errorf("NearestModel = %q", got)
	}
	if got := backends.NearestModel("zzzzzzzz", []string{"llama2"}); got != "" {
		t.Errorf("NearestModel of nothing near = %q", got)
	}
	many := make([]string, 21)
	for i := range many {
		many[i] = fmt.Sprint("m", i)
	}
	for _, c := range []struct {
		models []string
		want   string
	}{
		{nil, "no models"},
		{[]string{"a", "b"}, "a, b"},
		{many[:20], strings.Join(many[:20], ", ")},
		{many, strings.Join(many[:20], ", ") + " and 1 more"},
	} {
		if got := backends.ModelList(c.models); got != c.want {
			t.Errorf("ModelList(%d models) = %q, want %q", len(c.models), got, c.want)
		}
	}
}

func TestModelAbsent(t *testing.T) {
	list := func(models []string, err *backends.Error) func(context.Context) ([]string, *backends.Error) {
		return func(context.Context) ([]string, *backends.Error) { return models, err }
	}
	ctx := context.Background()
	for _, c := range []struct {
		name         string
		class        backends.ErrorClass
		list         func(context.Context) ([]string, *backends.Error)
		absent, ok   bool
		wantedModels bool
	}{
		{"404 absent", backends.ErrNotFound, list([]string{"b"}, nil), true, true, true},
		{"4xx present", backends.ErrHTTP4xx, list([]string{"m:latest"}, nil), false, true, true},
		{"5xx", backends.ErrServer, func(context.Context) ([]string, *backends.Error) { panic("no list for a 5xx") }, false, false, false},
		{"no list", backends.ErrNotFound, list(nil, &backends.Error{Class: backends.ErrServer}), false, false, false},
	} {
		models, absent, ok := backends.ModelAbsent(ctx, &backends.Error{Class: c.class}, "m", c.list)
		if absent != c.absent || ok != c.ok || (models != nil) != c.wantedModels {
			t.Errorf("%s: models %v, absent %v, ok %v; want absent %v, ok %v", c.name, models, absent, ok, c.absent, c.ok)
		}
	}
}

// A constructor's failure is a nil Backend, not a nil pointer in an interface.
func TestConstructor(t *testing.T) {
	fail := backends.Constructor(func(backends.Config, ...backends.Option) (*fakeBackend, error) { return nil, errors.New("bad url") })
	if b, err := fail(backends.Config{}); b != nil || err == nil || err.Error() != "bad url" {
		t.Fatalf("failed construction: %v, %v", b, err)
	}
	ok := backends.Constructor(func(backends.Config, ...backends.Option) (*fakeBackend, error) { return &fakeBackend{}, nil })
	if b, err := ok(backends.Config{}); err != nil || b == nil || b.Kind() != "fake" {
		t.Fatalf("construction: %v, %v", b, err)
	}
}

func TestProbeResultOK(t *testing.T) {
	for _, c := range []struct {
		p  backends.ProbeResult
		ok bool
	}{
		{backends.ProbeResult{Reachable: true}, true},
		{backends.ProbeResult{Reachable: true, Problems: []string{"x"}}, false},
		{backends.ProbeResult{}, false},
	} {
		if c.p.OK() != c.ok {
			t.Errorf("%+v.OK() = %v", c.p, !c.ok)
		}
	}
}

func TestOffloaded(t *testing.T) {
	for _, c := range []struct {
		size, vram int64
		off        bool
	}{{100, 100, false}, {100, 99, true}, {100, 0, true}} {
		if got := (backends.LoadedModel{SizeBytes: c.size, SizeVRAMBytes: c.vram}).Offloaded(); got != c.off {
			t.Errorf("size %d, VRAM %d: offloaded %v", c.size, c.vram, got)
		}
	}
}

func TestCaseOnly(t *testing.T) {
	for _, tc := range []struct {
		models []string
		id     string
		want   string
	}{
		{[]string{"tiny:latest"}, "Tiny", "tiny:latest"},
		{[]string{"tiny:latest"}, "TINY:Latest", "tiny:latest"},
		{[]string{"Qwen/Qwen2.5-7B-Instruct"}, "qwen/qwen2.5-7b-instruct", "Qwen/Qwen2.5-7B-Instruct"},
		{[]string{"tiny:latest"}, "tiny", ""},  // listed as it is
		{[]string{"tiny:latest"}, "tinny", ""}, // a misspelling, not case
		{[]string{"tiny:q8_0"}, "Tiny", ""},    // another tag
		{[]string{"*"}, "Tiny", ""},            // the mock serves any name
		{nil, "Tiny", ""},
	} {
		if got := backends.CaseOnly(tc.models, tc.id); got != tc.want {
			t.Errorf("CaseOnly(%q, %q) = %q, want %q", tc.models, tc.id, got, tc.want)
		}
	}
}
