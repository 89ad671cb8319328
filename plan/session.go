package plan

import (
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Session is a workload's `session` block: multi-turn conversations. A session is Turns
// requests in order; turn k sends every earlier turn's prompt and the server's own
// answer as chat messages, then its own prompt. Sessions, not requests, are the unit of
// concurrency: a level's concurrency is the number of sessions in flight.
type Session struct {
	// Turns is the number of requests of one session (at least 1).
	Turns int
	// ThinkTime is the pause between an answer and the session's next turn.
	ThinkTime time.Duration
	// Sessions is the number of sessions of one run; 0 means one per concurrency slot.
	Sessions int
	// Agent, when set, drives each turn by the model's tool calls (an agent block).
	Agent     *AgentLoop
	DeclRange hcl.Range
	// sessionsAt is where sessions is set, for a level it cannot fill.
	sessionsAt hcl.Range
}

var sessionSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "turns", Required: true}, {Name: "think_time"}, {Name: "sessions"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "agent"}},
}

// SessionsPerRun is the number of sessions in one run at a concurrency level.
func (s *Session) SessionsPerRun(level int) int {
	if s.Sessions > 0 {
		return s.Sessions
	}
	return level
}

// decodeSession reads a workload's session block, if any, and refuses what a session
// cannot be combined with: an open loop (sessions are closed loop: each waits for its
// own answers), a shared prefix or prefix groups (the history is the session's own
// shared prefix) and a fixed requests count (requests per run are sessions × turns).
func (l *loader) decodeSession(w *Workload, blocks hcl.Blocks, a hcl.Attributes, ctx *hcl.EvalContext) {
	found, prefixes := blocks.OfType("session"), blocks.OfType("prefix")
	if len(found) == 0 {
		return
	}
	for _, p := range prefixes {
		l.errorf(p.DefRange.Ptr(), "Conflicting blocks", "A prefix block cannot go with a session block (at %s): a session's history is already the prefix its turns share.", found[0].DefRange)
	}
	for _, dup := range found[1:] {
		l.errorf(dup.DefRange.Ptr(), "Duplicate session block", "A workload has one session block; the first is at %s.", found[0].DefRange)
	}
	b := found[0]
	s := &Session{DeclRange: b.DefRange}
	content, diags := b.Body.Content(sessionSchema)
	l.add(diags)
	sa := content.Attributes
	if t := sa["turns"]; t != nil && l.decode(t, ctx, &s.Turns) && s.Turns < 1 {
		l.errorf(t.Expr.Range().Ptr(), "Invalid turns", "A session has at least 1 turn, not %d.", s.Turns)
	}
	if n := sa["sessions"]; n != nil {
		s.sessionsAt = n.Expr.Range()
	}
	if n := sa["sessions"]; n != nil && l.decode(n, ctx, &s.Sessions) && s.Sessions < 1 {
		l.errorf(n.Expr.Range().Ptr(), "Invalid sessions", "sessions is the number of sessions per run, at least 1 (leave it out for one per concurrency slot), not %d.", s.Sessions)
	}
	if tt := sa["think_time"]; tt != nil {
		l.duration(tt, ctx, &s.ThinkTime) // a negative one is an invalid duration
	}
	for _, c := range []struct{ name, why string }{
		{"request_rate", "sessions run closed loop: each session waits for its own answers, and concurrency is the number of sessions in flight. Leave request_rate out."},
		{"shared_prefix", "a session's history is already the prefix its turns share. Leave shared_prefix out."},
		{"requests", "a session workload sends sessions × turns requests per run; set sessions in the session block instead."},
	} {
		if at := a[c.name]; at != nil {
			l.errorf(at.NameRange.Ptr(), "Conflicting arguments", "%s cannot be used with a session block (at %s): %s", c.name, b.DefRange, c.why)
		}
	}
	l.decodeAgentLoop(w, s, content.Blocks.OfType("agent"), ctx)
	w.Session = s
}

// checkSessionBackends refuses a session workload on a backend whose endpoint takes a
// bare prompt (api = "completions" or "generate"): it cannot carry the conversation.
func checkSessionBackends(cells []*Cell) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, g := range cellsByWorkload(cells, func(c *Cell) bool {
		return c.Workload.Session != nil && c.Backend != nil && (c.Backend.API == "completions" || c.Backend.API == "generate")
	}) {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError, Summary: "Session on a prompt-only endpoint",
			Detail: fmt.Sprintf("Workload %q has a session block, which sends each turn's history as chat messages, but %s, which takes one bare prompt (cells %s). Use api = \"chat\" there, or exclude the pair in the matrix.",
				g.w.Name, g.backendsAPI(), g.cellList()),
			Subject: g.w.Session.DeclRange.Ptr(),
		})
	}
	return diags
}
