package servers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/planrun/planrun/internal/procgroup"
)

// Options are what planrun adds to every server it starts.
type Options struct {
	// Env is added to planrun's environment before Spec.Env (which wins on conflicts):
	// values planrun provides, e.g. PLANRUN_PORT from FreePort.
	Env map[string]string
	// PollInterval is the gap between readiness checks; zero means DefaultPollInterval.
	PollInterval time.Duration
	// Client makes the readiness requests; nil means a client without keep-alives.
	Client *http.Client
	// Now is the clock StartupTime is measured with; nil means time.Now.
	Now func() time.Time
}

func (o *Options) now() func() time.Time {
	if o.Now != nil {
		return o.Now
	}
	return time.Now
}

// ErrNotReady is wrapped by the error Start returns when ReadyURL gave no 2xx in time.
var ErrNotReady = errors.New("not ready in time")

// killWait bounds the wait for a SIGKILLed group to disappear; only a process stuck in
// the kernel (a hung GPU driver call) takes longer.
const killWait = 30 * time.Second

// ExitError reports a server that exited on its own: before it was ready, while its
// setup commands ran, or while cells were being measured.
type ExitError struct {
	Name  string
	Phase string // "before ready", "during setup", "while running"
	// Status is how it ended, as os.ProcessState says it ("exit status 3", "signal: killed").
	Status string
	// Log is the log file's path; empty when the log was a temporary file.
	Log string
	// Tail holds the last log lines of this start.
	Tail []string
}

func (e *ExitError) Error() string {
	where := ""
	if e.Log != "" {
		where = " (log: " + e.Log + ")"
	}
	return fmt.Sprintf("server %q exited %s: %s%s%s", e.Name, e.Phase, e.Status, where, formatTail(e.Tail))
}

// SetupError reports a setup command that failed.
type SetupError struct {
	Name    string
	Command []string
	// Status is the command's exit status, or why it could not start.
	Status string
	// Tail holds the last lines the command wrote.
	Tail []string
}

func (e *SetupError) Error() string {
	return fmt.Sprintf("server %q: setup %q failed: %s%s", e.Name, e.Command, e.Status, formatTail(e.Tail))
}

// Process is one running server: the leader of its own process group.
type Process struct {
	spec   Spec
	sig    syscall.Signal
	cmd    *exec.Cmd
	guard  *procgroup.Guard
	pgid   int
	log    *serverLog
	from   int64 // where this start's output begins in the log
	exited chan struct{}

	startup, setup time.Duration

	mu       sync.Mutex
	phase    string
	stopping bool
	err      error

	stopOnce sync.Once
	stopErr  error
}

// Start starts spec's command in its own process group, waits until ReadyURL answers
// 2xx, and runs the setup commands. On any failure it stops what it started and says
// why, with the log's last lines. Canceling ctx aborts the start (and stops the
// process); once Start has returned, ctx no longer matters: call Stop.
func Start(ctx context.Context, spec Spec, opts Options) (*Process, error) {
	if len(spec.Command) == 0 {
		return nil, fmt.Errorf("server %q: empty command", spec.Name)
	}
	sig, err := ParseSignal(spec.StopSignal)
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", spec.Name, err)
	}
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("server %q: not started: %w", spec.Name, err)
	}
	log, err := openLog(&spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	cmd.Env = environ(opts.Env, spec.Env)
	cmd.Dir = spec.Dir
	// A file, not a pipe: Wait then never blocks on a grandchild that keeps the pipe open.
	cmd.Stdout, cmd.Stderr = log.f, log.f
	becomeSubreaper()

	p := &Process{spec: spec, sig: sig, cmd: cmd, log: log, exited: make(chan struct{}), phase: "before ready"}
	p.from = log.mark("start server %q at %s: %q", spec.Name, time.Now().Format(time.RFC3339), spec.Command)
	now := opts.now()
	t0 := now()
	// Its own process group, which dies with planrun however planrun dies.
	guard, err := procgroup.StartOn(cmd, spec.CPUs)
	if err != nil {
		log.mark("could not start: %v", err)
		log.close()
		return nil, fmt.Errorf("server %q: start: %w", spec.Name, missingPath(spec, err))
	}
	p.guard = guard
	p.pgid = cmd.Process.Pid
	go p.wait()

	if err := p.waitReady(ctx, opts); err != nil {
		p.Stop()
		return nil, err
	}
	p.startup = now().Sub(t0)
	p.setPhase("during setup")
	for _, argv := range spec.Setup {
		if err := p.runSetup(ctx, argv); err != nil {
			p.Stop()
			return nil, err
		}
	}
	select {
	case <-p.exited:
		// Died while its setup ran: that is a failed start, not a server to measure.
		err := p.Err()
		p.Stop()
		return nil, err
	default:
	}
	p.setup = now().Sub(t0) - p.startup
	p.setPhase("while running")
	return p, nil
}

// missingPath names what is missing when a start fails for want of a file: exec's own
// "fork/exec bin/ollama: no such file or directory" says neither where it looked nor that
// the working directory itself may be the one missing.
func missingPath(spec Spec, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if spec.Dir != "" {
		if _, statErr := os.Stat(spec.Dir); statErr != nil {
			return fmt.Errorf("its dir %s does not exist (%w)", spec.Dir, err)
		}
	}
	cmd := spec.Command[0]
	if !strings.ContainsRune(cmd, filepath.Separator) || filepath.IsAbs(cmd) || spec.Dir == "" {
		return err
	}
	return fmt.Errorf("%s does not exist (command %s, relative to dir %s): %w", filepath.Join(spec.Dir, cmd), cmd, spec.Dir, err)
}

// environ layers maps over planrun's environment; exec.Cmd keeps the last value of a
// duplicated key, so later layers win.
func environ(layers ...map[string]string) []string {
	env := os.Environ()
	for _, m := range layers {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, k+"="+m[k])
		}
	}
	return env
}

func (p *Process) setPhase(phase string) {
	p.mu.Lock()
	p.phase = phase
	p.mu.Unlock()
}

// wait reaps the leader and records why it ended, unless Stop ended it.
func (p *Process) wait() {
	p.cmd.Wait()
	p.mu.Lock()
	if !p.stopping {
		e := &ExitError{Name: p.spec.Name, Phase: p.phase, Status: p.cmd.ProcessState.String(), Tail: p.log.tail(p.from, LogTailLines)}
		if !p.log.temp {
			e.Log = p.log.path
		}
		p.err = e
	}
	p.mu.Unlock()
	close(p.exited)
}

func (p *Process) waitReady(ctx context.Context, opts Options) error {
	if p.spec.ReadyURL == "" {
		return nil
	}
	client := opts.Client
	if client == nil {
		client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	}
	interval := opts.PollInterval
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	timeout := p.spec.readyTimeout()
	end := time.Now().Add(timeout)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		ok, last := probe(ctx, client, p.spec.ReadyURL, end)
		// An answer from a process that is already gone came from someone else's server.
		select {
		case <-p.exited:
			return p.Err()
		default:
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server %q: waiting for %s: %w", p.spec.Name, p.spec.ReadyURL, context.Cause(ctx))
		case <-p.exited:
			return p.Err()
		case <-deadline.C:
			return fmt.Errorf("server %q: %w: no 2xx from %s within %s (last: %s)%s",
				p.spec.Name, ErrNotReady, p.spec.ReadyURL, timeout, last, formatTail(p.log.tail(p.from, LogTailLines)))
		case <-tick.C:
		}
	}
}

// probe GETs url once; it reports whether the answer was 2xx, and what it was.
func probe(ctx context.Context, client *http.Client, url string, end time.Time) (bool, string) {
	// A server that accepts but does not answer must not stall the poll loop, nor hold
	// it past the ready timeout.
	if limit := time.Now().Add(2 * time.Second); limit.Before(end) {
		end = limit
	}
	ctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 300, resp.Status
}

func (p *Process) runSetup(ctx context.Context, argv []string) error {
	if len(argv) == 0 {
		return nil
	}
	from := p.log.mark("setup for server %q: %q", p.spec.Name, argv)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = p.cmd.Env
	cmd.Dir = p.spec.Dir
	cmd.Stdout, cmd.Stderr = p.log.f, p.log.f
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGKILL) }
	guard, err := procgroup.Start(cmd)
	if err == nil {
		err = cmd.Wait()
		// A setup command has no business leaving processes behind.
		signalGroup(cmd.Process.Pid, syscall.SIGKILL)
		reapGroup(cmd.Process.Pid)
		guard.Release()
	}
	if err == nil {
		return nil
	}
	// The server's death explains a failed setup better than the setup does; a setup
	// that failed because the server just died sees the closed socket a moment before
	// planrun reaps the server, hence the short wait.
	select {
	case <-p.exited:
		return p.Err()
	case <-time.After(250 * time.Millisecond):
	}
	if cause := context.Cause(ctx); cause != nil {
		return fmt.Errorf("server %q: setup %q: %w", p.spec.Name, argv, cause)
	}
	return &SetupError{Name: p.spec.Name, Command: argv, Status: err.Error(), Tail: p.log.tail(from, LogTailLines)}
}

// Stop sends the stop signal to the server's whole process group, gives the group
// Spec.Grace to exit, then SIGKILLs what is left and reaps it. It is idempotent and safe
// to call from several goroutines; every call returns the first call's result.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() {
		p.stopErr = p.stop()
		p.log.close()
	})
	return p.stopErr
}

func (p *Process) stop() error {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()

	grace := p.spec.grace()
	deadline := time.Now().Add(grace)
	p.log.mark("stop server %q: %s to process group %d", p.spec.Name, p.sig, p.pgid)
	if err := signalGroup(p.pgid, p.sig); err != nil {
		return fmt.Errorf("server %q: stop: %w", p.spec.Name, err)
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.exited:
		// The leader is gone; its children may still be shutting down: they get the rest
		// of the grace period.
		if groupGone(p.pgid, deadline) {
			p.guard.Release()
			return nil
		}
	case <-timer.C:
	}
	p.log.mark("server %q: process group %d still running after %s; SIGKILL", p.spec.Name, p.pgid, grace)
	if err := signalGroup(p.pgid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("server %q: kill: %w", p.spec.Name, err)
	}
	select {
	case <-p.exited:
	case <-time.After(killWait):
		return fmt.Errorf("server %q: pid %d still running %s after SIGKILL", p.spec.Name, p.pgid, killWait)
	}
	if !groupGone(p.pgid, time.Now().Add(killWait)) {
		return fmt.Errorf("server %q: process group %d still running %s after SIGKILL", p.spec.Name, p.pgid, killWait)
	}
	p.guard.Release()
	return nil
}

// groupGone reaps the exited members of a group whose leader has been waited for and
// reports whether the group is empty by deadline.
func groupGone(pgid int, deadline time.Time) bool {
	for {
		reapGroup(pgid)
		if !groupExists(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Exited is closed when the server's leader process has exited, whether on its own or
// by Stop. The executor selects on it to notice a server that dies mid-cell.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err is nil while the server runs and after Stop ended it. Once the server has exited
// on its own, Err is an *ExitError saying how, with the log's last lines.
func (p *Process) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// State is the leader's exit state once it has exited, nil before.
func (p *Process) State() *os.ProcessState {
	select {
	case <-p.exited:
		return p.cmd.ProcessState
	default:
		return nil
	}
}

// PID is the leader's process id (also the process group id), for the GPU sampler.
func (p *Process) PID() int { return p.pgid }

// Name is the Spec's Name.
func (p *Process) Name() string { return p.spec.Name }

// Spec is the Spec the server was started with.
func (p *Process) Spec() Spec { return p.spec }

// StartupTime is the time from starting the command to the first 2xx from ReadyURL,
// for the run manifest.
func (p *Process) StartupTime() time.Duration { return p.startup }

// SetupTime is the time the setup commands took after the server was ready.
func (p *Process) SetupTime() time.Duration { return p.setup }

// LogPath is where the server's output goes; a temporary log is removed by Stop.
func (p *Process) LogPath() string { return p.log.path }

// String names the server and its pid, for progress lines.
func (p *Process) String() string {
	return fmt.Sprintf("%s (pid %d: %s)", p.spec.Name, p.pgid, strings.Join(p.spec.Command, " "))
}
