package servers

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stepClock advances one second per reading, so durations measured with it are exact.
type stepClock struct{ n int }

func (c *stepClock) now() time.Time {
	c.n++
	return time.Unix(0, 0).Add(time.Duration(c.n) * time.Second)
}

func TestStartReadyStop(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pids")
	spec, opts := serverSpec(t, "srv", "-delay=300ms", "-child", "-pidfile="+pidfile)
	spec.Env["HELPER_GREETING"] = "hello from spec"
	opts.Env["HELPER_GREETING"] = "overridden by spec"
	spec.Dir = dir
	spec.Log = filepath.Join(dir, "logs", "srv.log")
	clock := &stepClock{}
	opts.Now = clock.now

	for start := 1; start <= 2; start++ {
		p, err := Start(withTimeout(t), spec, opts)
		if err != nil {
			t.Fatalf("start %d: %v", start, err)
		}
		resp, err := http.Get(spec.ReadyURL)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("start %d: server not serving after Start: %v", start, err)
		}
		resp.Body.Close()
		// Three clock readings: before the command, at ready, after setup.
		if p.StartupTime() != time.Second || p.SetupTime() != time.Second {
			t.Errorf("start %d: startup %s setup %s, want 1s and 1s from the step clock", start, p.StartupTime(), p.SetupTime())
		}
		leader, child := readPids(t, pidfile)
		if p.PID() != leader {
			t.Errorf("PID() = %d, helper says %d", p.PID(), leader)
		}
		if err := p.Stop(); err != nil {
			t.Fatalf("stop: %v", err)
		}
		if err := p.Err(); err != nil {
			t.Errorf("Err after Stop = %v, want nil", err)
		}
		if ws := p.State().Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGTERM {
			t.Errorf("leader ended with %v, want SIGTERM", p.State())
		}
		assertGone(t, "server", leader)
		assertGone(t, "server's child", child)
		if err := p.Stop(); err != nil {
			t.Errorf("second Stop = %v, want nil", err)
		}
		os.Remove(pidfile)
	}

	log, err := os.ReadFile(spec.Log)
	if err != nil {
		t.Fatal(err)
	}
	text := string(log)
	for _, want := range []string{"greeting=hello from spec", "cwd=" + dir, "serving"} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, `==> planrun: start server "srv"`); n != 2 {
		t.Errorf("log has %d start headers, want 2 (appended):\n%s", n, text)
	}
}

// A command missing under its dir, or a dir that is missing, is named with the path looked
// at: examples/slurm.hcl run before `make quickstart` fills .tools/ fails this way.
func TestStartMissingCommand(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ dir, want string }{
		{dir, filepath.Join(dir, "bin/ollama") + " does not exist (command bin/ollama, relative to dir " + dir + ")"},
		{filepath.Join(dir, "nowhere"), "its dir " + filepath.Join(dir, "nowhere") + " does not exist"},
	} {
		spec := Spec{Name: "ollama", Command: []string{"bin/ollama", "serve"}, Dir: c.dir, Log: filepath.Join(dir, "log")}
		_, err := Start(context.Background(), spec, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("dir %s: err = %v, want it to say %q", c.dir, err, c.want)
		}
	}
}

func TestStartFailures(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		edit  func(*Spec)
		check func(t *testing.T, err error)
	}{
		{
			name: "exits before ready",
			args: []string{"-lines=30", "-exit=3"},
			check: func(t *testing.T, err error) {
				var e *ExitError
				if !errors.As(err, &e) {
					t.Fatalf("err = %v, want *ExitError", err)
				}
				if e.Phase != "before ready" || e.Status != "exit status 3" {
					t.Errorf("phase %q status %q", e.Phase, e.Status)
				}
				if len(e.Tail) != LogTailLines || e.Tail[0] != "line 13" {
					t.Errorf("tail = %q, want the last %d lines, from line 13", e.Tail, LogTailLines)
				}
				if !strings.Contains(err.Error(), "| line 30") || strings.Contains(err.Error(), "| line 12\n") {
					t.Errorf("message does not show the tail:\n%v", err)
				}
			},
		},
		{
			name: "ready timeout",
			args: []string{"-delay=1h", "-lines=2"},
			// Long enough that a loaded machine has started the helper and had its log
			// lines read before the limit: the message must show them.
			edit: func(s *Spec) { s.ReadyTimeout = 2 * time.Second },
			check: func(t *testing.T, err error) {
				if !errors.Is(err, ErrNotReady) {
					t.Fatalf("err = %v, want ErrNotReady", err)
				}
				if !strings.Contains(err.Error(), "| line 2") || !strings.Contains(err.Error(), "connection refused") {
					t.Errorf("message lacks the last probe result or the log tail:\n%v", err)
				}
			},
		},
		{
			name: "failing setup",
			args: []string{"-lines=1"},
			edit: func(s *Spec) {
				s.Setup = [][]string{
					helperCommand(t, "-get="+s.ReadyURL),
					append([]string{"env", helperEnv + "=setup"}, helperCommand(t, "-exit=2", "-lines=3")...),
				}
				// The first setup command is the helper in setup mode too.
				s.Setup[0] = append([]string{"env", helperEnv + "=setup"}, s.Setup[0]...)
			},
			check: func(t *testing.T, err error) {
				var e *SetupError
				if !errors.As(err, &e) {
					t.Fatalf("err = %v, want *SetupError", err)
				}
				if e.Status != "exit status 2" || len(e.Tail) != 4 || e.Tail[3] != "boom" || e.Tail[0] != "line 1" {
					t.Errorf("status %q tail %q, want exit status 2 and only this command's output", e.Status, e.Tail)
				}
			},
		},
		{
			name: "server dies during setup",
			edit: func(s *Spec) {
				crash := strings.Replace(s.ReadyURL, "/health", "/crash", 1)
				s.Setup = [][]string{append([]string{"env", helperEnv + "=setup"}, helperCommand(t, "-get="+crash)...)}
			},
			check: func(t *testing.T, err error) {
				var e *ExitError
				if !errors.As(err, &e) || e.Phase != "during setup" || e.Status != "exit status 7" {
					t.Fatalf("err = %v, want an ExitError during setup with exit status 7", err)
				}
			},
		},
		{
			name:  "unknown stop signal",
			edit:  func(s *Spec) { s.StopSignal = "SIGWHAT" },
			check: wantErrContaining(`unknown stop signal "SIGWHAT"`),
		},
		{
			name:  "missing program",
			edit:  func(s *Spec) { s.Command = []string{"/nonexistent/planrun-server"} },
			check: wantErrContaining("no such file"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pids")
			spec, opts := serverSpec(t, "srv", append(tt.args, "-child", "-pidfile="+pidfile)...)
			if tt.edit != nil {
				tt.edit(&spec)
			}
			p, err := Start(withTimeout(t), spec, opts)
			if err == nil {
				p.Stop()
				t.Fatal("Start succeeded, want an error")
			}
			tt.check(t, err)
			if _, statErr := os.Stat(pidfile); statErr == nil {
				leader, child := readPids(t, pidfile)
				assertGone(t, "server", leader)
				assertGone(t, "server's child", child)
			}
		})
	}
}

func wantErrContaining(s string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("err = %v, want it to contain %q", err, s)
		}
	}
}

func TestSetupRuns(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "setup-out")
	spec, opts := serverSpec(t, "srv")
	spec.Env["HELPER_GREETING"] = "from setup"
	spec.Setup = [][]string{
		// GETs the ready URL: proves setup runs once the server is ready.
		{"env", helperEnv + "=setup", spec.Command[0], "-get=" + spec.ReadyURL},
		{"env", helperEnv + "=setup", spec.Command[0], "-write=" + out},
	}
	p, err := Start(withTimeout(t), spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	b, err := os.ReadFile(out)
	if err != nil || string(b) != "from setup" {
		t.Errorf("setup output %q, %v; want the spec's env", b, err)
	}
	log, _ := os.ReadFile(p.LogPath())
	if !strings.Contains(string(log), "setup: server answered") {
		t.Errorf("setup output missing from the server log:\n%s", log)
	}
	p.Stop()
	if _, err := os.Stat(p.LogPath()); !os.IsNotExist(err) {
		t.Errorf("temporary log %s left after Stop: %v", p.LogPath(), err)
	}
}

func TestStopSignals(t *testing.T) {
	tests := []struct {
		name   string
		signal string
		args   []string
		want   syscall.Signal
	}{
		{"default SIGTERM", "", nil, syscall.SIGTERM},
		{"SIGINT", "SIGINT", nil, syscall.SIGINT},
		{"short name", "int", nil, syscall.SIGINT},
		// The leader and its child ignore SIGTERM: Stop must escalate to SIGKILL.
		{"escalates to SIGKILL", "SIGTERM", []string{"-ignore-term"}, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pids")
			spec, opts := serverSpec(t, "srv", append(tt.args, "-child", "-pidfile="+pidfile)...)
			spec.StopSignal = tt.signal
			spec.Grace = 2 * time.Second // a loaded machine's helper still answers its signal in time
			p, err := Start(withTimeout(t), spec, opts)
			if err != nil {
				t.Fatal(err)
			}
			leader, child := readPids(t, pidfile)
			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
			if ws := p.State().Sys().(syscall.WaitStatus); ws.Signal() != tt.want {
				t.Errorf("leader ended with %v, want %v", p.State(), tt.want)
			}
			assertGone(t, "server", leader)
			assertGone(t, "server's child", child)
		})
	}
}

func TestCrashIsNoticed(t *testing.T) {
	spec, opts := serverSpec(t, "srv", "-crash-after=300ms")
	p, err := Start(withTimeout(t), spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if p.Err() != nil {
		t.Fatalf("Err while running = %v", p.Err())
	}
	select {
	case <-p.Exited():
	case <-time.After(hangGuard):
		t.Fatal("crash not noticed")
	}
	var e *ExitError
	if !errors.As(p.Err(), &e) || e.Phase != "while running" || e.Status != "exit status 7" || e.Tail[len(e.Tail)-1] != "crashing" {
		t.Fatalf("Err = %#v, want an ExitError while running, exit status 7, ending in the crash line", p.Err())
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop after crash = %v", err)
	}
	if p.Err() == nil {
		t.Error("Stop after a crash cleared Err")
	}
}

func TestParseSignal(t *testing.T) {
	tests := []struct {
		in   string
		want syscall.Signal
		err  bool
	}{
		{"", syscall.SIGTERM, false},
		{"SIGTERM", syscall.SIGTERM, false},
		{"sigint", syscall.SIGINT, false},
		{"HUP", syscall.SIGHUP, false},
		{" SIGKILL ", syscall.SIGKILL, false},
		{"SIGSTOP", 0, true},
		{"9", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseSignal(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseSignal(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestFreePort(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("port %d from FreePort is not free: %v", port, err)
	}
	l.Close()
}
