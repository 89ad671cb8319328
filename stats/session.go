package stats

import "github.com/planrun/planrun/backends"

// TurnSummary is the figures of one turn index over a level's sessions: TTFT grows with
// the history each later turn carries.
type TurnSummary struct {
	Turn      int `json:"turn"` // from 1
	Requests  int `json:"requests"`
	Succeeded int `json:"succeeded"`
	// TTFT and E2E cover this turn's successful requests.
	TTFT Dist `json:"ttft_s"`
	E2E  Dist `json:"e2e_s"`
	// PromptTokensMean is the mean server-counted prompt tokens of this turn, history
	// included (NaN when the server counted none).
	PromptTokensMean float64 `json:"prompt_tokens_mean"`
}

// SessionSummary is the figures of a level's sessions as wholes.
type SessionSummary struct {
	// Turns is the number of turns of a session (Target.Turns).
	Turns int `json:"turns"`
	// Sessions counts the sessions that sent at least one turn; Completed those whose
	// every turn succeeded.
	Sessions  int `json:"sessions"`
	Completed int `json:"completed"`
	// TurnsNotSent counts the turns never sent because an earlier turn of their session
	// failed (a failed turn ends its session).
	TurnsNotSent int `json:"turns_not_sent"`
	// TurnsCompleted is the number of successful turns per session, over all sessions.
	TurnsCompleted Dist `json:"turns_completed"`
	// Duration is the first turn's start to the last turn's end, think times included,
	// over completed sessions.
	Duration Dist `json:"duration_s"`
}

// sessionStore is an Accumulator's session figures: per turn index the scalars of its
// requests, and per session of the run its span and successful turns (a few numbers
// per session, never the samples).
type sessionStore struct {
	byTurn []turnFigures
	spans  map[int]*sessionSpan // this run's sessions, by index
	// Sessions folded in from merged runs.
	sessions, completed, notSent int
	durations, turnsOK           []float64
}

type turnFigures struct {
	requests, succeeded int
	ttft, e2e           valueStore // bounded, as the level's own figures are
	promptSum, promptN  int
}

type sessionSpan struct {
	span Window // first turn's start to last turn's end
	ok   int
}

// addTurn counts a finished request as turn turn of session session (both from 1), in
// addition to addSample, which counts it among the level's requests. s is not retained.
func (a *Accumulator) addTurn(session, turn int, s *backends.Sample) {
	if a.sessions == nil {
		a.sessions = &sessionStore{spans: map[int]*sessionSpan{}}
	}
	st := a.sessions
	for len(st.byTurn) < turn {
		st.byTurn = append(st.byTurn, turnFigures{})
	}
	tf := &st.byTurn[turn-1]
	tf.requests++
	sp := st.spans[session]
	if sp == nil {
		sp = &sessionSpan{}
		st.spans[session] = sp
	}
	sp.span.extend(s.Start, s.Start.Add(s.End))
	if !s.OK() {
		return
	}
	tf.succeeded++
	sp.ok++
	if d, ok := s.TTFT(); ok {
		tf.ttft.add(d.Seconds())
	}
	tf.e2e.add(s.E2E().Seconds())
	if s.PromptTokens > 0 {
		tf.promptSum += s.PromptTokens
		tf.promptN++
	}
}

// wholes are the store's sessions as wholes, its own run's and those merged in, against
// turns per session.
func (st *sessionStore) wholes(turns int) (sessions, completed, notSent int, durations, turnsOK []float64) {
	sessions, completed, notSent = st.sessions, st.completed, st.notSent
	durations = append([]float64(nil), st.durations...)
	turnsOK = append([]float64(nil), st.turnsOK...)
	for _, sp := range st.spans {
		sessions++
		turnsOK = append(turnsOK, float64(sp.ok))
		if sp.ok >= turns {
			completed++
			durations = append(durations, sp.span.Seconds())
		} else {
			// A failed turn ended the session: the turns after it were not sent.
			notSent += max(turns-sp.ok-1, 0)
		}
	}
	return sessions, completed, notSent, durations, turnsOK
}

// merge adds o's sessions (another run's) to st.
func (st *sessionStore) merge(o *sessionStore, turns int) {
	for len(st.byTurn) < len(o.byTurn) {
		st.byTurn = append(st.byTurn, turnFigures{})
	}
	for i := range o.byTurn {
		t, tf := &st.byTurn[i], &o.byTurn[i]
		t.requests += tf.requests
		t.succeeded += tf.succeeded
		t.ttft.merge(&tf.ttft)
		t.e2e.merge(&tf.e2e)
		t.promptSum += tf.promptSum
		t.promptN += tf.promptN
	}
	n, c, ns, d, ok := o.wholes(turns)
	st.sessions += n
	st.completed += c
	st.notSent += ns
	st.durations = append(st.durations, d...)
	st.turnsOK = append(st.turnsOK, ok...)
}

// summaries derive the per-turn and per-session figures.
func (st *sessionStore) summaries(turns int) ([]TurnSummary, *SessionSummary) {
	out := make([]TurnSummary, len(st.byTurn))
	for i := range st.byTurn {
		tf := &st.byTurn[i]
		out[i] = TurnSummary{Turn: i + 1, Requests: tf.requests, Succeeded: tf.succeeded,
			TTFT: tf.ttft.dist(), E2E: tf.e2e.dist(),
			PromptTokensMean: ratio(float64(tf.promptSum), float64(tf.promptN))}
	}
	s := &SessionSummary{Turns: turns}
	var durations, turnsOK []float64
	s.Sessions, s.Completed, s.TurnsNotSent, durations, turnsOK = st.wholes(turns)
	s.Duration, s.TurnsCompleted = NewDist(durations), NewDist(turnsOK)
	return out, s
}
