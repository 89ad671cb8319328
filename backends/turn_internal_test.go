package backends

import (
	"io"
	"net"
	"testing"
	"time"
)

// countTurn counts the writes handed to it and makes them at once.
type countTurn struct{ sends int }

func (c *countTurn) Send(stamp Clock, s Sender) {
	c.sends++
	s.SendAt(stamp.Now())
}

// An arm a request left on a connection it never wrote to (its turn then taken in
// Due) holds nothing: the connection's next write, another request's, goes as it comes
// and clears the arm. A live arm is held once, and the write after it goes as it comes.
func TestTurnConnArms(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state int32
		sends int
	}{
		{"stale arm, turn taken", turnTaken, 0},
		{"live arm", turnArmed, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := net.Pipe()
			defer a.Close()
			defer b.Close()
			go io.Copy(io.Discard, b)
			c := newTurnConn(a)
			turn := &countTurn{}
			w := &watch{clock: SystemClock{}, turn: turn}
			w.begin(time.Now())
			w.state.Store(tc.state)
			c.armed.Store(w)
			for i := range 2 {
				if n, err := c.Write([]byte("abc")); n != 3 || err != nil {
					t.Fatalf("write %d: %d, %v", i, n, err)
				}
			}
			if turn.sends != tc.sends || c.armed.Load() != nil {
				t.Fatalf("%d writes held, arm left %v: want %d held, none left", turn.sends, c.armed.Load() != nil, tc.sends)
			}
		})
	}
}
