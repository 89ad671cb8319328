package executor

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
)

// recordedTask is a task of steps recorded steps: step k sends the task and k−1 calls
// with their results, and its tool ran k ms.
func recordedTask(name string, steps int) AgentTask {
	msgs := []backends.Message{{Role: "system", Content: "be an agent"}, {Role: backends.RoleUser, Content: name}}
	task := AgentTask{Name: name}
	for k := 1; k <= steps; k++ {
		task.Steps = append(task.Steps, AgentTaskStep{Messages: append([]backends.Message(nil), msgs...), ToolTime: time.Duration(k) * time.Millisecond})
		id := "call_" + name + string(rune('0'+k))
		msgs = append(msgs, backends.Message{Role: backends.RoleAssistant, ToolCalls: []backends.ToolCall{{ID: id, Name: "bash", Args: `{}`, ArgsJSON: true}}},
			backends.Message{Role: backends.RoleTool, ToolCallID: id, Content: "out"})
	}
	return task
}

// A replayed task sends each recorded step's conversation as recorded (behind a marker
// of its session's), whatever the model answers, after the recorded tool time; sessions
// take the tasks in turn, and max_steps cuts a longer task short, saying so.
func TestAgentReplay(t *testing.T) {
	b := newToolBackend(0) // the model never calls: the recording drives the steps
	lv := LevelSpec{Concurrency: 2, Requests: 3, RepeatRuns: 1, Prompts: &Prompts{Words: 3, Salt: "s"},
		Request: backends.Request{Model: "m"}, Session: &SessionSpec{Turns: 1, Sessions: 3,
			Agent: &AgentSpec{MaxSteps: 3, Tasks: []AgentTask{recordedTask("a", 2), recordedTask("b", 4)}}}}
	var events []Event
	RunLevel(context.Background(), b, lv, Options{OnRequest: collect(&events)})
	// Sessions 1 and 3 replay task a (2 steps), session 2 task b cut at 3 of its 4.
	if len(events) != 2+3+2 {
		t.Fatalf("%d requests, want 7", len(events))
	}
	for _, ev := range events {
		if limit := ev.Session == 2 && ev.Step == 3; ev.StepLimit != limit {
			t.Errorf("%s: step limit %v", ev.ID, ev.StepLimit)
		}
		if ev.Step > 1 && ev.ToolWait < time.Duration(ev.Step-1)*time.Millisecond {
			t.Errorf("%s: %v in tools, less than the recorded %dms", ev.ID, ev.ToolWait, ev.Step-1)
		}
	}
	markers := map[string]string{}
	for _, req := range b.sent {
		msgs := req.Messages()
		task := map[string]string{"run0/req0": "a", "run0/req1": "b", "run0/req2": "a"}[strings.Split(req.ID, "/step")[0]]
		step := 1
		if i := strings.Index(req.ID, "/step"); i > 0 {
			step = int(req.ID[i+5] - '0')
		}
		want := lv.Session.Agent.Tasks[map[string]int{"a": 0, "b": 1}[task]].Steps[step-1].Messages
		if len(msgs) != len(want) || !strings.HasSuffix(msgs[0].Content, " be an agent") || msgs[1].Content != task {
			t.Fatalf("%s: %d messages %+v, want the recorded %d of task %s", req.ID, len(msgs), msgs, len(want), task)
		}
		for j := 1; j < len(want); j++ {
			if msgs[j].Role != want[j].Role || msgs[j].Content != want[j].Content || msgs[j].ToolCallID != want[j].ToolCallID {
				t.Fatalf("%s: message %d is %+v, want %+v", req.ID, j, msgs[j], want[j])
			}
		}
		session := strings.Split(req.ID, "/step")[0]
		if m, ok := markers[session]; ok && m != msgs[0].Content {
			t.Errorf("%s: marker %q, the session's first step had %q", req.ID, msgs[0].Content, m)
		}
		markers[session] = msgs[0].Content
	}
	if markers["run0/req0"] == markers["run0/req2"] {
		t.Errorf("sessions 1 and 3 replay one task behind one marker %q", markers["run0/req0"])
	}
}

// A level travels to load agents as JSON: a replayed task's calls and results go whole.
func TestAgentTaskJSON(t *testing.T) {
	task := recordedTask("a", 3)
	b, err := json.Marshal(LevelSpec{Session: &SessionSpec{Turns: 1, Agent: &AgentSpec{MaxSteps: 3, Tasks: []AgentTask{task}}}})
	if err != nil {
		t.Fatal(err)
	}
	var back LevelSpec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Session.Agent.Tasks; !reflect.DeepEqual(got, []AgentTask{task}) {
		t.Errorf("after JSON:\n%+v\nwant\n%+v", got, []AgentTask{task})
	}
}
