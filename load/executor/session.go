package executor

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/planrun/planrun/backends"
)

// SessionSpec runs a level as multi-turn conversations. A session is Turns requests in
// order: turn k sends every earlier turn's prompt and the server's own answer as chat
// messages (History), then its own prompt, after ThinkTime since the last answer.
// Sessions are the unit of concurrency: LevelSpec.Concurrency sessions are in flight,
// each with one request at a time. A failed turn ends its session: its later turns are
// not sent (a figure of the session statistics, never a silent gap).
type SessionSpec struct {
	Turns     int
	ThinkTime time.Duration
	// Sessions is the number of sessions in each run.
	Sessions int
	// Agent, when set, runs each turn as an agent loop driven by the model's tool calls.
	Agent *AgentSpec `json:",omitempty"`
}

// turn is what a session adds to one of its requests: its place, the conversation so
// far, and (filled by send) the prompt it was sent with.
type turn struct {
	session, turn int // from 1
	history       []backends.Message
	keepText      bool // the answer goes into the next turn's history
	prompt        string
	// carried is the tokens of the conversation the turn carries as the server counted
	// them: the last turn's prompt and answer (0 on turn 1); -1 when it counted none.
	carried int
	// agent is the request's step of an agent loop (the first sends the turn's prompt);
	// nil outside one.
	agent *agentStep
	// prompts make a tool result's text (AgentSpec.result).
	prompts *Prompts
	// recorded, when set, is the whole conversation a replayed task's step sends
	// (AgentSpec.Tasks), in place of the turn's prompt and history.
	recorded []backends.Message
}

// finish is request s on its way to the drain, with its send time against its schedule
// (p), its shared prefix tokens and, for a session's turn, its place (t nil: a request of
// no session).
func (t *turn) finish(s backends.Sample, shared int, p paced) finished {
	f := finished{Sample: s, paced: p, sharedPrefix: shared}
	if t != nil {
		f.session, f.turn = t.session, t.turn
		if t.carried >= 0 && s.PromptTokens > t.carried {
			f.newPrompt = s.PromptTokens - t.carried
		}
		if t.agent != nil {
			// A replayed task's limit cuts the recording short whatever the model answered.
			f.step, f.toolWait, f.stepLimit = t.agent.step, t.agent.toolWait, t.agent.limit && (s.ToolCalled() || t.recorded != nil)
		}
	}
	return f
}

// apply puts the turn's history on req and notes the prompt it is sent with; nothing
// for a request of no session (nil). An agent loop's later step sends no prompt of its
// own (its history ends in tools' results) and is named for its step.
func (t *turn) apply(req *backends.Request) {
	if t == nil {
		return
	}
	session := req.ID
	if t.agent != nil && t.agent.step > 1 {
		req.Prompt, req.ID = "", req.ID+"/step"+strconv.Itoa(t.agent.step)
	}
	if t.recorded != nil {
		t.applyRecorded(req, session)
		t.prompt = req.Prompt
		return
	}
	t.prompt, req.History, req.KeepText = req.Prompt, t.history, t.keepText
}

// runSessions runs the level's sessions from slots workers, each starting its next
// session as soon as its last one ended, from start (zero: at once); under a Share, the
// agent's sessions, each whole. Session i's turn k is request i×Turns + k−1,
// so each turn has its own id and shape.
func runSessions(ctx context.Context, clk backends.Clock, start time.Time, lv LevelSpec, slots int, wg *sync.WaitGroup, send func(paced, *turn, slotted) backends.Sample) {
	sessions := lv
	sessions.Requests, sessions.Ramp = lv.Session.Sessions, 0
	closedLoop(ctx, clk, start, sessions, slots, wg, func(i int, _ slotted) {
		if a := lv.Session.Agent; a != nil && len(a.Tasks) > 0 {
			replayTask(ctx, clk, lv.Session, lv.Prompts, i, send)
			return
		}
		converse(ctx, clk, lv.Session, lv.Prompts, i, send)
	})
}

// converse runs session i (from 0) turn by turn until its last turn, a failed turn, or
// ctx is done; the think time (and an agent loop's tool time) is waited on clk.
func converse(ctx context.Context, clk backends.Clock, sp *SessionSpec, prompts *Prompts, i int, send func(paced, *turn, slotted) backends.Sample) {
	var history []backends.Message
	carried := 0
	for k := 1; k <= sp.Turns; k++ {
		if k > 1 && !wait(ctx, clk, sp.ThinkTime) {
			return
		}
		if ctx.Err() != nil {
			return
		}
		t := &turn{session: i + 1, turn: k, history: history, keepText: k < sp.Turns || sp.Agent != nil, carried: carried, prompts: prompts}
		if sp.Agent != nil {
			t.agent = &agentStep{step: 1, limit: sp.Agent.MaxSteps == 1}
		}
		n := i*sp.Turns + k - 1
		s := send(paced{n: n}, t, slotted{})
		if sp.Agent != nil {
			var ok bool
			if s, history, ok = agentTurn(ctx, clk, sp, n, t, s, send); !ok {
				return
			}
			carried = carriedBy(s)
			continue
		}
		if !s.OK() {
			return
		}
		carried = carriedBy(s)
		history = append(history, backends.Message{Role: "user", Content: t.prompt},
			backends.Message{Role: "assistant", Content: s.Text})
	}
}
