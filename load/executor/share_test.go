package executor

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// sent is one request as the executor sent it: what a server would see of it, and
// where the executor placed it.
type sent struct {
	prompt    string
	maxTokens int
	slot      int
	scheduled time.Duration
	session   int
	turn      int
	shared    int
}

// runShares runs run 0 of lv once as a whole and once as agents shares, and returns
// each run's requests by id.
func runShares(t *testing.T, lv LevelSpec, agents int) (whole map[string]sent, shares []map[string]sent) {
	t.Helper()
	run := func(share Share) map[string]sent {
		lv := lv
		lv.Share = share
		var mu sync.Mutex
		got := map[string]sent{}
		RunOne(context.Background(), &recordingBackend{}, lv, 0, false, Options{OnRequest: func(ev Event) {
			mu.Lock()
			defer mu.Unlock()
			if _, dup := got[ev.ID]; dup {
				t.Errorf("%s sent twice", ev.ID)
			}
			got[ev.ID] = sent{prompt: ev.Text, maxTokens: ev.MaxTokens, slot: ev.Slot, scheduled: ev.Scheduled,
				session: ev.Session, turn: ev.Turn, shared: ev.SharedPrefixTokens}
		}})
		return got
	}
	whole = run(Share{})
	for i := range agents {
		shares = append(shares, run(Share{Index: i, Of: agents}))
	}
	return whole, shares
}

// recordingBackend answers at once and echoes the request's prompt as the answer's
// text, so a test sees what was sent.
type recordingBackend struct{}

func (recordingBackend) Kind() string { return "fake" }
func (recordingBackend) Name() string { return "fake.recording" }
func (recordingBackend) Probe(context.Context, []string) backends.ProbeResult {
	return backends.ProbeResult{}
}

func (recordingBackend) Do(_ context.Context, req backends.Request) backends.Sample {
	if req.Due != nil {
		req.Due(nil)
	}
	if req.Wrote != nil {
		req.Wrote()
	}
	s := backends.Sample{ID: req.ID, Start: time.Now(), Text: req.Prompt, OutputTokens: 2, Chunks: 2, PromptTokens: 100}
	s.FirstToken, s.End = time.Microsecond, 2*time.Microsecond
	return s
}

// union merges the shares' requests; a request two agents sent fails the test.
func union(t *testing.T, shares []map[string]sent) map[string]sent {
	t.Helper()
	out := map[string]sent{}
	for i, s := range shares {
		for id, r := range s {
			if _, dup := out[id]; dup {
				t.Errorf("agent %d sent %s, which another agent sent too", i, id)
			}
			out[id] = r
		}
	}
	return out
}

// Four agents of a closed loop send the same requests one process sends, each from
// slots of its own (numbered as the whole loop's), in proportion to their slots.
func TestShareSplitsAClosedLoopBySlots(t *testing.T) {
	lv := LevelSpec{Concurrency: 6, Requests: 60, RepeatRuns: 1, Prompts: &Prompts{Words: 4, Salt: "s"},
		Request: backends.Request{MaxTokens: 8}}
	whole, shares := runShares(t, lv, 4)
	all := union(t, shares)
	if !slices.Equal(slices.Sorted(maps.Keys(all)), slices.Sorted(maps.Keys(whole))) || len(whole) != 60 {
		t.Fatalf("the agents sent %d requests, one process %d: not the same ids", len(all), len(whole))
	}
	for id, r := range all {
		if w := whole[id]; w.prompt != r.prompt || w.maxTokens != r.maxTokens {
			t.Errorf("%s: an agent sent %+v, one process %+v", id, r, w)
		}
	}
	// Slots 1..6 over 4 agents: agent 0 has 1 and 5, agent 1 has 2 and 6, agents 2 and
	// 3 one each; requests follow their slots (60/6 a slot). Which of an agent's slots
	// sends which of its requests is the race of its workers.
	wantSlots := [][]int{{1, 5}, {2, 6}, {3}, {4}}
	for i, s := range shares {
		for id, r := range s {
			if !slices.Contains(wantSlots[i], r.slot) {
				t.Errorf("agent %d sent %s from slot %d, not one of its slots %v", i, id, r.slot, wantSlots[i])
			}
		}
		if len(s) != 10*len(wantSlots[i]) {
			t.Errorf("agent %d: %d requests, want %d", i, len(s), 10*len(wantSlots[i]))
		}
	}
}

// An open loop's requests go to the agents by ordinal, each at the time the one
// schedule gives it; a replay's rows likewise, and a shared prefix is counted against
// every earlier request of the schedule, whichever agent sent it.
func TestShareSplitsPacedLoopsByOrdinal(t *testing.T) {
	shapes := []Shape{{PromptTokens: 40, PrefixTokens: 24, PrefixGroup: 1, MaxTokens: 4}, {PromptTokens: 40, PrefixTokens: 24, PrefixGroup: 2, MaxTokens: 6}}
	open := LevelSpec{Concurrency: 8, Requests: 40, RepeatRuns: 1, RequestRate: 2000, Seed: 7,
		Prompts: &Prompts{Words: 4, Salt: "s", Fit: Fit{TokensPerWord: 1}}, Shapes: shapes}
	rows := make([]TraceRow, 30)
	for i := range rows {
		rows[i] = TraceRow{At: time.Duration(i/3) * time.Millisecond, Shape: shapes[i%2]} // bursts of 3
	}
	replay := open
	replay.RequestRate, replay.Trace = 0, func(ctx context.Context, out chan<- TraceRow) error {
		for _, r := range rows {
			select {
			case out <- r:
			case <-ctx.Done():
				return nil
			}
		}
		return nil
	}
	for name, lv := range map[string]LevelSpec{"open loop": open, "replay": replay} {
		t.Run(name, func(t *testing.T) {
			whole, shares := runShares(t, lv, 3)
			all := union(t, shares)
			if len(all) != len(whole) || len(whole) == 0 {
				t.Fatalf("the agents sent %d requests, one process %d", len(all), len(whole))
			}
			for i, s := range shares {
				for id, r := range s {
					n := requestIndex(t, id)
					if n%3 != i {
						t.Errorf("agent %d sent %s, request %d's agent is %d", i, id, n, n%3)
					}
					if w := whole[id]; w.scheduled != r.scheduled || w.prompt != r.prompt || w.maxTokens != r.maxTokens || w.shared != r.shared {
						t.Errorf("%s: agent %d sent %+v, one process %+v", id, i, r, w)
					}
				}
			}
			if whole["run0/req5"].shared == 0 {
				t.Fatal("no shared prefix counted: the test could not tell a share's count from the whole's")
			}
		})
	}
}

// Sessions stay whole: every turn of a session is sent by one agent.
func TestShareKeepsSessionsWhole(t *testing.T) {
	lv := LevelSpec{Concurrency: 4, Requests: 30, RepeatRuns: 1, Prompts: &Prompts{Words: 4, Salt: "s"},
		Session: &SessionSpec{Turns: 3, Sessions: 10}}
	whole, shares := runShares(t, lv, 2)
	if all := union(t, shares); len(all) != len(whole) || len(whole) != 30 {
		t.Fatalf("the agents sent %d turns, one process %d", len(all), len(whole))
	}
	owner := map[int]int{}
	for i, s := range shares {
		for id, r := range s {
			if o, ok := owner[r.session]; ok && o != i {
				t.Errorf("session %d: turns on agents %d and %d (%s)", r.session, o, i, id)
			}
			owner[r.session] = i
		}
	}
	if len(owner) != 10 {
		t.Errorf("%d sessions seen, want 10", len(owner))
	}
}

// A run given a start instant waits for it: a closed loop's first request and a paced
// run's schedule start there.
func TestRunStartsAtItsInstant(t *testing.T) {
	for name, lv := range map[string]LevelSpec{
		"closed loop": {Concurrency: 2, Requests: 4, RepeatRuns: 1},
		"open loop":   {Concurrency: 2, Requests: 4, RepeatRuns: 1, RequestRate: 1000},
	} {
		t.Run(name, func(t *testing.T) {
			at := time.Now().Add(80 * time.Millisecond)
			var first time.Time
			var mu sync.Mutex
			RunOne(context.Background(), recordingBackend{}, lv, 0, false, Options{StartAt: at, OnRequest: func(ev Event) {
				mu.Lock()
				defer mu.Unlock()
				if first.IsZero() || ev.Start.Before(first) {
					first = ev.Start
				}
			}})
			if first.Before(at) {
				t.Fatalf("first request started %v before its instant", at.Sub(first))
			}
		})
	}
}

// Share.Slots deals n slots out in turn: counts differ by at most one and sum to n.
func TestShareSlots(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 7, 100} {
		for _, of := range []int{1, 2, 3, 4} {
			sum := 0
			for i := range of {
				s := (Share{Index: i, Of: of}).Slots(n)
				if d := s - n/of; n > 0 && (d < 0 || d > 1) {
					t.Errorf("Slots(%d) of agent %d/%d = %d", n, i, of, s)
				}
				sum += s
			}
			if sum != n {
				t.Errorf("%d slots over %d agents sum to %d", n, of, sum)
			}
		}
	}
}
