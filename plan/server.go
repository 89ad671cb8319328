package plan

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/planrun/planrun/servers"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Server is a `server "<name>"` block: a process planrun starts before the cells that
// need it and stops after them (vllm serve, ollama serve, ...). Its Spec is exactly what
// package servers runs, filled from the block with paths made absolute against the
// plan's directory and the defaults below applied.
type Server struct {
	servers.Spec
	DeclRange hcl.Range
	// commandAt is where the command is given, for what its flags cannot serve;
	// readyAt the ready url and envAt the env map, for what they contradict.
	commandAt, readyAt, envAt hcl.Range
	envExpr                   hcl.Expression
}

// Default server timings: a vLLM start loads weights and captures CUDA graphs, which
// takes minutes on a cold cache.
const (
	defaultReadyTimeout = 10 * time.Minute
	defaultGrace        = 10 * time.Second
)

var stopSignals = []string{"SIGTERM", "SIGINT", "SIGKILL", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"}

var serverSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "command", Required: true}, {Name: "args"}, {Name: "env"}, {Name: "dir"},
		{Name: "stop_signal"}, {Name: "grace"}, {Name: "log"}, {Name: "setup"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "ready"}},
}

var readySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "url", Required: true}, {Name: "timeout"}},
}

func (s *Server) object() cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"ref":  cty.StringVal("server." + s.Name),
		"name": cty.StringVal(s.Name),
	})
}

func (l *loader) decodeServerBlock(b *hcl.Block, ctx *hcl.EvalContext) *Server {
	name := b.Labels[0]
	if !validName(name) {
		return nil
	}
	for _, prev := range l.p.Servers {
		if prev.Name == name {
			return nil
		}
	}
	s := &Server{Spec: servers.Spec{Name: name, StopSignal: "SIGTERM", Grace: defaultGrace, ReadyTimeout: defaultReadyTimeout}, DeclRange: b.DefRange}
	content, diags := b.Body.Content(serverSchema)
	l.add(diags)
	before := len(l.diags)
	attrs := content.Attributes

	// command is a list of strings, or one string with the arguments in args.
	if a := attrs["command"]; a != nil && isNull(a, ctx) {
		l.errorIn(a.Expr, ctx, a.Expr.Range().Ptr(), "Missing command", "command is null; it names the program to run, e.g. [\"vllm\", \"serve\", \"Qwen/Qwen2.5-7B-Instruct\"].")
	} else if a != nil {
		s.commandAt = a.Expr.Range()
		if v, ok := l.eval(a.Expr, ctx, scopePlan); ok {
			decoded := true
			if v.Type() == cty.String {
				s.Command = []string{v.AsString()}
			} else {
				decoded = l.decode(a, ctx, &s.Command)
			}
			if decoded && (len(s.Command) == 0 || strings.TrimSpace(s.Command[0]) == "") {
				l.errorf(a.Expr.Range().Ptr(), "Empty server command", "command names the program to run, e.g. [\"vllm\", \"serve\", \"Qwen/Qwen2.5-7B-Instruct\"].")
			}
		}
	}
	if a := attrs["args"]; a != nil {
		var args []string
		if len(s.Command) > 1 {
			l.errorf(a.NameRange.Ptr(), "Conflicting arguments", "args goes with a command given as one string; this command is already a list.")
		} else if l.decode(a, ctx, &args) {
			s.Command = append(s.Command, args...)
		}
	}
	if len(s.Command) > 0 {
		l.add(programWithSpaces("command", s.Command, s.commandAt.Ptr(), l.resolvePath))
	}
	if a := attrs["env"]; a != nil {
		s.envAt, s.envExpr = a.Expr.Range(), a.Expr
		l.decode(a, ctx, &s.Env)
	}
	if a := attrs["dir"]; a != nil && l.decode(a, ctx, &s.Dir) {
		s.Dir = l.resolvePath(s.Dir)
	}
	if a := attrs["log"]; a != nil && l.decode(a, ctx, &s.Log) {
		s.Log = l.resolvePath(s.Log)
	}
	if a := attrs["stop_signal"]; a != nil && l.decode(a, ctx, &s.StopSignal) {
		var d hcl.Diagnostics
		s.StopSignal, d = stopSignal(a, s.StopSignal)
		l.add(d)
	}
	if a := attrs["grace"]; a != nil {
		l.duration(a, ctx, &s.Grace)
	}
	if a := attrs["setup"]; a != nil && l.decode(a, ctx, &s.Setup) {
		l.add(checkSetup(a, s.Setup, l.resolvePath))
	}
	for i, rb := range content.Blocks {
		if i > 0 {
			l.errorf(rb.DefRange.Ptr(), "Duplicate ready block", "A server has at most one ready block; the first is at %s.", content.Blocks[0].DefRange)
			continue
		}
		rc, diags := rb.Body.Content(readySchema)
		l.add(diags)
		if a := rc.Attributes["url"]; a != nil && l.decode(a, ctx, &s.ReadyURL) {
			s.readyAt = a.Expr.Range()
			if _, ok := httpURL(s.ReadyURL); !ok {
				l.errorf(a.Expr.Range().Ptr(), "Invalid ready URL", "ready.url is an http:// URL polled until it answers, not %q.%s", s.ReadyURL, urlSuggestion(s.ReadyURL))
			}
		}
		if a := rc.Attributes["timeout"]; a != nil {
			l.duration(a, ctx, &s.ReadyTimeout)
		}
	}
	if hasErrorsSince(l.diags, before) {
		return nil
	}
	return s
}

// stopSignal is a stop_signal as the server manager takes it ("INT" is SIGINT), and
// the error for one it does not know.
func stopSignal(a *hcl.Attribute, given string) (string, hcl.Diagnostics) {
	sig := strings.ToUpper(given)
	if !strings.HasPrefix(sig, "SIG") {
		sig = "SIG" + sig
	}
	if slices.Contains(stopSignals, sig) {
		return sig, nil
	}
	var rep report
	rep.errorf(a.Expr.Range().Ptr(), "Invalid stop_signal", "stop_signal is one of %s, not %q.%s", quoteList(stopSignals), given, suggestion(sig, stopSignals))
	return sig, rep.diags
}

// checkSetup refuses an empty setup command, and one whose program is a whole line.
func checkSetup(a *hcl.Attribute, setup [][]string, resolve func(string) string) hcl.Diagnostics {
	var rep report
	for i, c := range setup {
		if len(c) == 0 {
			rep.errorf(a.Expr.Range().Ptr(), "Empty setup command", "Each setup entry is a command list such as [\"ollama\", \"pull\", \"qwen2.5:7b\"].")
			break
		}
		rep.add(programWithSpaces(fmt.Sprintf("setup[%d]", i), c, elemRange(a.Expr, i), resolve))
	}
	return rep.diags
}

// programWithSpaces refuses a command whose program holds spaces (command = "vllm
// serve m", or a list of one such string) unless a file of that name exists: no shell
// runs it, so the program would be one named after the whole line. The fix given is
// the list it means.
func programWithSpaces(what string, argv []string, subject *hcl.Range, resolve func(string) string) hcl.Diagnostics {
	fields := strings.Fields(argv[0])
	if len(fields) < 2 {
		return nil
	}
	if _, err := os.Stat(resolve(argv[0])); err == nil {
		return nil
	}
	var quoted []string
	for _, f := range append(fields, argv[1:]...) {
		quoted = append(quoted, strconv.Quote(f))
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Command is one string",
		Detail: fmt.Sprintf("%s runs the program %q, which does not exist: a command is not run through a shell, so its words must be separate strings. Give it as a list: %s = [%s].",
			what, argv[0], what, strings.Join(quoted, ", ")),
		Subject: subject,
	}}
}
