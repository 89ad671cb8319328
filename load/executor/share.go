package executor

// Share is one load agent's part of a level (agent Index of Of, from 0): every agent
// runs the same LevelSpec with its own Share and sends its part of the same requests,
// numbered and seeded as one process would number and seed them, so the requests sent
// are the same whatever Of is. The zero Share (or Of 1) is the whole level.
//
//   - A closed loop's slots are dealt out in turn: global slot g (from 0) is agent g mod
//     Of's, so the agents' slot counts differ by at most one. Request n goes to the agent
//     of slot n mod slots, so each agent's requests are in proportion to its slots.
//     Sessions are dealt the same way, whole: every turn of a session is its agent's.
//   - An open loop's or a replay's requests go by ordinal: agent k sends requests k,
//     k+Of, k+2·Of, ... of the one schedule, each at its own time, so every agent keeps
//     the schedule's order for its own rows and a burst is spread over the agents.
//   - A cap on requests in flight is dealt out like slots.
type Share struct {
	Index, Of int
}

// agents is the number of agents the level is shared by (1 for the zero Share).
func (s Share) agents() int { return max(s.Of, 1) }

// Whole reports whether the share is the whole level (one agent).
func (s Share) Whole() bool { return s.Of <= 1 }

// Slots is how many of n slots (or of a cap of n on requests in flight) are the
// agent's: every Of-th from its index. 0 stays 0 (no cap).
func (s Share) Slots(n int) int {
	k := s.agents()
	if n <= 0 || k == 1 {
		return n
	}
	out := n / k
	if s.Index < n%k {
		out++
	}
	return out
}

// slot is the global slot (from 0) of the agent's local slot w (from 0).
func (s Share) slot(w int) int { return s.Index + w*s.agents() }

// ownsPaced reports whether paced request n (open loop, replay) is the agent's.
func (s Share) ownsPaced(n int) bool { return n%s.agents() == s.Index }

// ownsSlotted reports whether closed-loop request (or session) n of a loop of slots
// slots is the agent's: the request the slot n mod slots would take.
func (s Share) ownsSlotted(n, slots int) bool {
	return slots <= 0 || (n%slots)%s.agents() == s.Index
}

// ownedSlotted counts the agent's requests of a closed loop of requests requests over
// slots slots.
func (s Share) ownedSlotted(requests, slots int) int {
	if s.Whole() {
		return requests
	}
	n := 0
	for i := 0; i < requests; i++ {
		if s.ownsSlotted(i, slots) {
			n++
		}
	}
	return n
}
