package plan

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/servers/cmdline"
)

// serverCheck holds one cell against what its managed server's command line states
// (cmdline.Read), saying each problem through f.
type serverCheck func(c *Cell, st cmdline.Stated, f *findings)

// serverChecks are the checks of a managed server's command line against its cells:
// the models it serves, its quantization, its port, its longest sequence, prefix
// caching and the GPUs it spans. Each is a judgement the plan alone can make.
var serverChecks = []serverCheck{
	checkServedModels, checkServedQuantization, checkServedPort, checkModelLen, checkPrefixCaching, checkTensorParallel,
}

// checkServerCommands runs serverChecks over every cell with a managed server whose
// command line an engine's table reads, and each server's ready URL against the port
// it listens on.
func checkServerCommands(cells []*Cell) hcl.Diagnostics {
	f := newFindings()
	type read struct {
		st cmdline.Stated
		ok bool
	}
	byServer := map[*Server]read{} // one read per server, however many cells it serves
	for _, c := range cells {
		if c.Server == nil || c.Workload == nil || c.Backend == nil || len(c.Server.Command) == 0 || strings.ContainsAny(c.Server.Command[0], " \t") {
			continue // a command given as one string is refused as such: its flags are unread
		}
		r, seen := byServer[c.Server]
		if !seen {
			r.st, r.ok = cmdline.Read(c.Server.Command, c.Server.Env)
			byServer[c.Server] = r
		}
		st, ok := r.st, r.ok
		if !ok {
			continue
		}
		checkReadyPort(c.Server, st, f)
		for _, check := range serverChecks {
			check(c, st, f)
		}
	}
	return f.diags()
}

// findings gathers problems, one diagnostic per problem and place naming every
// workload or backend it applies to: two diagnostics on one place would read as one.
type findings struct {
	order []*finding
	found map[string]*finding
	said  map[string]bool
}

type finding struct {
	diag    *hcl.Diagnostic
	clauses []string
	tail    string
}

func newFindings() *findings {
	return &findings{found: map[string]*finding{}, said: map[string]bool{}}
}

// say records clause under the problem summary at subject; the detail is the clauses
// joined, then tail.
func (f *findings) say(sev hcl.DiagnosticSeverity, subject hcl.Range, summary, clause, tail string) {
	k := summary + "\x00" + subject.String()
	if f.said[k+"\x00"+clause] {
		return
	}
	f.said[k+"\x00"+clause] = true
	fd := f.found[k]
	if fd == nil {
		fd = &finding{diag: &hcl.Diagnostic{Severity: sev, Summary: summary, Subject: subject.Ptr()}, tail: tail}
		f.found[k] = fd
		f.order = append(f.order, fd)
	}
	fd.clauses = append(fd.clauses, clause)
}

func (f *findings) diags() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, fd := range f.order {
		text := strings.Join(fd.clauses, "; ")
		fd.diag.Detail = strings.ToUpper(text[:1]) + text[1:] + fd.tail
		diags = append(diags, fd.diag)
	}
	return diags
}

// checkServedModels refuses a cell that asks for a model an engine that names its
// models (vLLM) does not serve: its model_id, or a name of its workload's model mix.
// An adapter not in --lora-modules is a warning: it may be loaded at run time.
func checkServedModels(c *Cell, st cmdline.Stated, f *findings) {
	s, w := c.Server, c.Workload
	if !st.StrictNames {
		return
	}
	asked, who := []string{c.ModelID}, fmt.Sprintf("the cells of matrix %q ask for", c.Matrix)
	if len(w.Models) > 0 {
		asked, who = nil, fmt.Sprintf("workload %q sends requests to", w.Name)
		for _, m := range w.Models {
			asked = append(asked, m.Name)
		}
	}
	var missing []string
	for _, m := range asked {
		if !servesName(st, m) {
			missing = append(missing, m)
		}
	}
	switch {
	case len(missing) > 0 && !st.LoRA && (len(st.Served) > 0 || len(asked) > 1):
		summary := "Server does not serve the model"
		if len(w.Models) > 0 {
			summary = "Server cannot serve the model mix"
		}
		f.say(hcl.DiagError, s.commandAt, summary, fmt.Sprintf("%s %s", who, quoteList(missing)),
			fmt.Sprintf(", but server %q serves %s and has no --enable-lora, so %s refuses them. Name the model the server serves (model_id), or add \"--enable-lora\" and \"--lora-modules\", \"NAME=PATH\", … to its command.", s.Name, servedText(st), st.Engine))
	case len(missing) > 0 && st.LoRA:
		f.say(hcl.DiagWarning, s.commandAt, "Adapter not in --lora-modules", fmt.Sprintf("%s %s", who, quoteList(missing)),
			fmt.Sprintf(", which server %q does not name in --lora-modules; they fail unless the adapter is loaded at run time (/v1/load_lora_adapter).", s.Name))
	}
}

// servesName reports whether the server names the model: served or an adapter. A name
// that differs only in case is apply's to resolve against the server's own list.
func servesName(st cmdline.Stated, m string) bool {
	for _, n := range append(slices.Clone(st.Served), st.Adapters...) {
		if strings.EqualFold(n, m) {
			return true
		}
	}
	return false
}

func servedText(st cmdline.Stated) string {
	if len(st.Served) == 0 {
		return "one model"
	}
	return "only " + quoteList(st.Served)
}

// checkServedQuantization refuses a cell whose declared quantization the server's
// --quantization (or, for a declared dtype, its --dtype) contradicts: apply would read
// the same flags and fail the cell before sending, after starting the server.
func checkServedQuantization(c *Cell, st cmdline.Stated, f *findings) {
	declared := c.Quantization
	if declared == "" {
		return
	}
	given, flag := st.Quantization, "--quantization"
	if given == "" && IsDtype(declared) {
		given, flag = st.Dtype, "--dtype"
	}
	if given == "" || SameQuantization(declared, given) {
		return
	}
	if IsDtype(declared) != IsDtype(given) && flag == "--dtype" {
		return // a method (awq) with an activation dtype (float16) is no contradiction
	}
	f.say(hcl.DiagError, c.Server.commandAt, "Quantization contradicts the server",
		fmt.Sprintf("matrix %q declares quantization %q", c.Matrix, declared),
		fmt.Sprintf(", but server %q runs with %s %s: its rows would be labelled with a quantization the server does not serve. Fix the matrix's quantization or the server's command.", c.Server.Name, flag, given))
}

// checkServedPort refuses a cell whose backend URL, on this machine, reaches another
// port than the one its managed server listens on: every request would go elsewhere.
func checkServedPort(c *Cell, st cmdline.Stated, f *findings) {
	p, ok := loopbackPort(c.Backend.URL, st)
	if !ok || st.Port == 0 || p == st.Port {
		return
	}
	subject := c.Backend.urlAt
	if subject.Filename == "" {
		subject = c.Backend.DeclRange
	}
	f.say(hcl.DiagError, subject, "Backend URL misses the server's port",
		fmt.Sprintf("backend %s's url %q reaches port %d", c.Backend.Addr, c.Backend.URL, p),
		fmt.Sprintf(", but server %q listens on port %d (%s %s): no request would reach it. Give the url port %d, or the server %s.", c.Server.Name, st.Port, st.Engine, portSource(st), st.Port, portFix(st, p)))
}

// checkReadyPort refuses a ready URL, on this machine, that polls another port than
// the one the server listens on: apply would wait out the ready timeout.
func checkReadyPort(s *Server, st cmdline.Stated, f *findings) {
	p, ok := loopbackPort(s.ReadyURL, st)
	if !ok || st.Port == 0 || p == st.Port {
		return
	}
	f.say(hcl.DiagError, s.readyAt, "Ready URL misses the server's port",
		fmt.Sprintf("server %q's ready url %q polls port %d", s.Name, s.ReadyURL, p),
		fmt.Sprintf(", but the server listens on port %d (%s %s): apply would wait out the ready timeout (%s) for an answer that never comes. Give the ready url port %d, or the server %s.", st.Port, st.Engine, portSource(st), s.ReadyTimeout, st.Port, portFix(st, p)))
}

// portSource says where the port was read: "--port 8001", "OLLAMA_HOST", "default".
func portSource(st cmdline.Stated) string {
	if st.PortFrom == "the default" {
		return "default"
	}
	return st.PortFrom + " " + strconv.Itoa(st.Port)
}

func portFix(st cmdline.Stated, p int) string {
	switch st.Engine {
	case "ollama":
		return fmt.Sprintf("env OLLAMA_HOST = \"127.0.0.1:%d\"", p)
	case "mock-server":
		return fmt.Sprintf("\"-addr\", \"127.0.0.1:%d\"", p)
	}
	return fmt.Sprintf("\"--port\", \"%d\"", p)
}

// loopbackPort is the port a URL reaches when its host is this machine (or the host
// the server is told to listen on); ok is false for another host, where the port may
// be a proxy's.
func loopbackPort(raw string, st cmdline.Stated) (int, bool) {
	u, ok := httpURL(raw)
	if !ok {
		return 0, false
	}
	h := u.Hostname()
	ip := net.ParseIP(h)
	if h != "localhost" && (ip == nil || !ip.IsLoopback() && !ip.IsUnspecified()) && (st.Host == "" || h != st.Host) {
		return 0, false
	}
	if u.Port() == "" {
		if u.Scheme == "https" {
			return 443, true
		}
		return 80, true
	}
	p, err := strconv.Atoi(u.Port())
	return p, err == nil
}

// checkModelLen refuses a workload whose requests are longer than the server's longest
// sequence (--max-model-len), and warns when a session's history may outgrow it.
func checkModelLen(c *Cell, st cmdline.Stated, f *findings) {
	s, w := c.Server, c.Workload
	if st.MaxModelLen <= 0 {
		return
	}
	in, out := longest(w.PromptLength), longest(w.OutputLength)
	if e := w.Embeddings; e != nil {
		in, out = slices.Max(e.InputTokens), 0
	}
	switch {
	case in > 0 && in+out > st.MaxModelLen:
		f.say(hcl.DiagError, s.commandAt, "Requests longer than --max-model-len",
			fmt.Sprintf("workload %q asks for up to %d prompt + %d output tokens", w.Name, in, out),
			fmt.Sprintf(", but server %q runs with a longest sequence of %s, so %s refuses them. Raise it or shorten the workload.", s.Name, st.MaxModelLenText, st.Engine))
	case w.Session != nil && w.Session.Turns > 1 && in+out > 0 && w.Session.Turns*(in+out) > st.MaxModelLen:
		f.say(hcl.DiagWarning, s.commandAt, "Sessions may outgrow --max-model-len",
			fmt.Sprintf("each turn of workload %q carries the history: %d turns of up to %d tokens reach %d", w.Name, w.Session.Turns, in+out, w.Session.Turns*(in+out)),
			fmt.Sprintf(", past server %q's longest sequence of %s, so the late turns may be refused.", s.Name, st.MaxModelLenText))
	}
}

// checkPrefixCaching warns when a workload built to share prefixes runs on a server
// with prefix caching off: its rows would measure no cache hits.
func checkPrefixCaching(c *Cell, st cmdline.Stated, f *findings) {
	w := c.Workload
	if !st.NoPrefixCache || w.Prefix == nil && !w.SharedPrefix {
		return
	}
	what := "a prefix block"
	if w.Prefix == nil {
		what = "shared_prefix = true"
	}
	f.say(hcl.DiagWarning, c.Server.commandAt, "Prefix caching is off",
		fmt.Sprintf("workload %q has %s", w.Name, what),
		fmt.Sprintf(", built for a server that reuses shared prefixes, but server %q runs with prefix caching turned off: its rows will measure no cache hits.", c.Server.Name))
}

// checkTensorParallel refuses a server that spans more GPUs than its cell's hardware
// pins: the engine would not start.
func checkTensorParallel(c *Cell, st cmdline.Stated, f *findings) {
	hw := c.Hardware
	if hw == nil || len(hw.Pins.GPUs) == 0 || st.TensorParallel <= len(hw.Pins.GPUs) {
		return
	}
	f.say(hcl.DiagError, hw.Pins.GPURange, "Server spans more GPUs than pinned",
		fmt.Sprintf("server %q runs with a tensor-parallel size of %d", c.Server.Name, st.TensorParallel),
		fmt.Sprintf(", but hardware %q pins it to %d GPU(s) (gpus = %v): it would not start. Pin as many GPUs as the server spans.", hw.Name, len(hw.Pins.GPUs), hw.Pins.GPUs))
}

// longest is the longest a length can draw, 0 when it is not known before the run (a
// dataset's rows).
func longest(l dataset.Length) int {
	switch l.Kind {
	case dataset.LengthFixed:
		return l.Value
	case dataset.LengthDataset:
		return 0
	}
	return l.Max
}
