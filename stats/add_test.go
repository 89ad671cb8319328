package stats

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
)

// Add takes the whole record: a session turn, a shared prefix and a schedule count as
// the record says, exactly as the parts fed one by one.
func TestAddTakesTheRecord(t *testing.T) {
	byRecord, byParts := NewAccumulator(Target{Turns: 2}), NewAccumulator(Target{Turns: 2})
	for i := range 4 {
		s := ok(i, 2, backends.TokensUsage, 10, 20)
		s.PromptTokens = 100
		ev := executor.Event{Sample: &s, Session: i/2 + 1, Turn: i%2 + 1, SharedPrefixTokens: 10 * i}
		if i%2 == 1 {
			ev.Paced, ev.Scheduled, ev.SendLag = true, time.Duration(i)*time.Millisecond, time.Duration(i)*time.Microsecond
		}
		byRecord.Add(ev)
		byParts.addSample(&s)
		byParts.addTurn(ev.Session, ev.Turn, &s)
		byParts.addSharedPrefix(&s, ev.SharedPrefixTokens)
		if ev.Paced {
			byParts.addSendLag(ev.SendLag)
			byParts.addPaced(ev.Scheduled, &s)
		}
	}
	got, want := byRecord.Summary(byRecord.Window()), byParts.Summary(byParts.Window())
	if got.Sessions == nil || want.Sessions == nil || fmt.Sprintf("%+v", *got.Sessions) != fmt.Sprintf("%+v", *want.Sessions) {
		t.Errorf("sessions %+v, want %+v", got.Sessions, want.Sessions)
	}
	got.Sessions, want.Sessions = nil, nil
	noNaN(&got)
	noNaN(&want)
	if !reflect.DeepEqual(got, want) {
		g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want)
		t.Errorf("Add(record):\n%s\nwant the parts':\n%s", g, w)
	}
	if got.SharedPrefixTokens != 60 || got.SendLag.P50 == 0 || len(got.Turns) != 2 || want.Delivered.RateScheduled != 500 {
		t.Errorf("the record's facts did not all count: %d shared tokens, send lag %+v, %d turns", got.SharedPrefixTokens, got.SendLag, len(got.Turns))
	}
}
