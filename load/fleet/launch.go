package fleet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/planrun/planrun/internal/procgroup"
	"github.com/planrun/planrun/internal/shell"
)

// Launcher starts a fleet's agents, each the planrun binary in its agent mode told
// its lead, token, index and count through the environment (Env).
type Launcher interface {
	// Launch starts l.N agents and returns their processes; each process's end goes to
	// exits.
	Launch(ctx context.Context, l Launch, exits chan<- Exit) (*Processes, error)
}

// Launch is what a launcher starts: N agents dialing Lead with Token, their
// logs in LogDir.
type Launch struct {
	N      int
	Lead   string
	Token  string
	LogDir string
}

// env is the environment that tells agent i (or, with i < 0, every agent, which reads
// its index from its scheduler) its lead, token and count.
func (l Launch) env(i int) []string {
	env := []string{EnvLead + "=" + l.Lead, EnvToken + "=" + l.Token, EnvCount + "=" + strconv.Itoa(l.N)}
	if i >= 0 {
		env = append(env, EnvIndex+"="+strconv.Itoa(i))
	}
	return env
}

// Exit is the end of an agent's process: Agent is its index, or -1 for a process that
// carried every agent (one srun step); Err is its exit status (nil: exit 0); Log is
// the end of its log, LogPath the log.
type Exit struct {
	Agent   int
	Err     error
	Log     string
	LogPath string
}

// Processes are a fleet's agent processes.
type Processes struct {
	where   []string // per agent
	logs    []string // per agent: its log file
	stopAll func()
	running sync.WaitGroup
}

// Where says where agent i runs: "local", "ssh HOST", "srun task I".
func (p *Processes) Where(i int) string {
	if i < len(p.where) {
		return p.where[i]
	}
	return "?"
}

// LogTail is the last line or so of agent i's log, "" when it has none.
func (p *Processes) LogTail(i int) string {
	if i >= len(p.logs) || p.logs[i] == "" {
		return ""
	}
	return logTail(p.logs[i])
}

// Stop waits up to grace for the processes to exit by themselves (after the fleet's
// bye), then kills what is left.
func (p *Processes) Stop(grace time.Duration) {
	done := make(chan struct{})
	go func() { p.running.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	p.stopAll()
	<-done
}

// logTail is the end of the file at path, on one line, at most 300 bytes.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	b = bytes.TrimSpace(b)
	if len(b) > 300 {
		b = b[len(b)-300:]
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// start runs cmd, its output to logPath, in its own process group (so a terminal's
// Ctrl-C reaches the lead alone, which stops the agents itself) that dies with
// this process; its end goes to exits as agent i's (-1: every agent's).
func (p *Processes) start(cmd *exec.Cmd, i int, logPath string, exits chan<- Exit) error {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = log, log
	g, err := procgroup.Start(cmd)
	if err != nil {
		log.Close()
		return err
	}
	p.running.Add(1)
	go func() {
		defer p.running.Done()
		err := cmd.Wait()
		g.Release()
		log.Close()
		exits <- Exit{Agent: i, Err: err, Log: logTail(logPath), LogPath: logPath}
	}()
	return nil
}

// startLocal starts agent i as a process on this machine: command with the agent's
// environment on top of this process's, its output in the fleet's agent-i.log.
func (p *Processes) startLocal(command []string, spec Launch, i int, exits chan<- Exit) (*exec.Cmd, string, error) {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = append(os.Environ(), spec.env(i)...)
	logPath := filepath.Join(spec.LogDir, fmt.Sprintf("agent-%d.log", i))
	return cmd, logPath, p.start(cmd, i, logPath, exits)
}

// killAll kills the process groups of the commands.
func killAll(cmds []*exec.Cmd) {
	for _, c := range cmds {
		if c.Process != nil {
			procgroup.Kill(c.Process.Pid)
		}
	}
}

// Local starts every agent as a process on this machine: Command (the planrun binary,
// with "agent") and the agent's environment on top of this process's.
type Local struct {
	Command []string
}

func (l Local) Launch(_ context.Context, spec Launch, exits chan<- Exit) (*Processes, error) {
	p := &Processes{}
	var cmds []*exec.Cmd
	p.stopAll = func() { killAll(cmds) }
	for i := range spec.N {
		cmd, logPath, err := p.startLocal(l.Command, spec, i, exits)
		if err != nil {
			p.stopAll()
			return nil, fmt.Errorf("agent %d: %w", i, err)
		}
		cmds = append(cmds, cmd)
		p.where = append(p.where, "local")
		p.logs = append(p.logs, logPath)
	}
	return p, nil
}

// SSH starts agent i on Hosts[i] through SSH (its command and options, e.g. ssh -o
// BatchMode=yes), running Planrun there with the agent's environment on its command
// line. The host must reach the lead's advertised address, and hold the API
// keys the backend names in its own environment: they are never sent.
type SSH struct {
	SSH     []string
	Hosts   []string
	Planrun string
}

func (s SSH) Launch(_ context.Context, spec Launch, exits chan<- Exit) (*Processes, error) {
	if len(s.Hosts) != spec.N {
		return nil, fmt.Errorf("%d agents over %d hosts: one agent a host", spec.N, len(s.Hosts))
	}
	p := &Processes{}
	var cmds []*exec.Cmd
	p.stopAll = func() { killAll(cmds) }
	for i, host := range s.Hosts {
		remote := append([]string{"env"}, spec.env(i)...)
		remote = append(remote, s.Planrun, "agent")
		for k, a := range remote {
			remote[k] = shell.Quote(a)
		}
		args := append(append(append([]string(nil), s.SSH[1:]...), host), strings.Join(remote, " "))
		cmd := exec.Command(s.SSH[0], args...)
		logPath := filepath.Join(spec.LogDir, fmt.Sprintf("agent-%d.log", i))
		if err := p.start(cmd, i, logPath, exits); err != nil {
			p.stopAll()
			return nil, fmt.Errorf("agent %d (ssh %s): %w", i, host, err)
		}
		cmds = append(cmds, cmd)
		p.where = append(p.where, "ssh "+host)
		p.logs = append(p.logs, logPath)
	}
	return p, nil
}

// Srun starts every agent as one task of one srun step inside the Slurm job this
// process runs in: Srun (srun and its options) runs Planrun's agent mode N times, each
// task reading its index from SLURM_PROCID. Slurm spreads the tasks over the job's
// nodes; --kill-on-bad-exit ends the step when a task fails.
type Srun struct {
	Srun    []string
	Planrun string
}

func (s Srun) Launch(_ context.Context, spec Launch, exits chan<- Exit) (*Processes, error) {
	args := append(append([]string(nil), s.Srun[1:]...), "--ntasks="+strconv.Itoa(spec.N), "--kill-on-bad-exit=1",
		"--label", "--export=ALL", s.Planrun, "agent")
	cmd := exec.Command(s.Srun[0], args...)
	cmd.Env = append(os.Environ(), spec.env(-1)...)
	logPath := filepath.Join(spec.LogDir, "agents.log")
	p := &Processes{}
	p.stopAll = func() { killAll([]*exec.Cmd{cmd}) }
	if err := p.start(cmd, -1, logPath, exits); err != nil {
		return nil, fmt.Errorf("srun: %w", err)
	}
	for i := range spec.N {
		p.where = append(p.where, "srun task "+strconv.Itoa(i))
		p.logs = append(p.logs, logPath)
	}
	return p, nil
}

// Scheduled is the launcher of agents that a batch scheduler starts itself, as the
// indices of one job, all at once (a Kubernetes Indexed Job: index I's pod runs agent I,
// which dials the lead for as long as its EnvWait). The lead runs in
// index 0, so agent 0 is started here, a local process as Local starts one, dialing Self
// (the address the lead listens on); nothing is started for the others, and no
// process of theirs can be seen from here: one that does not dial in within the fleet's
// Connect, or whose connection ends, fails the cell named by its index (Name I). The
// fleet's Token must be the one the scheduler gave the agents.
type Scheduled struct {
	Command []string
	Self    string
	Name    string
}

func (s Scheduled) Launch(_ context.Context, spec Launch, exits chan<- Exit) (*Processes, error) {
	self := spec
	if s.Self != "" {
		self.Lead = s.Self
	}
	p := &Processes{where: make([]string, spec.N), logs: make([]string, spec.N)}
	cmd, logPath, err := p.startLocal(s.Command, self, 0, exits)
	if err != nil {
		return nil, fmt.Errorf("agent 0: %w", err)
	}
	p.stopAll = func() { killAll([]*exec.Cmd{cmd}) }
	p.logs[0] = logPath
	for i := range p.where {
		p.where[i] = s.Name + " " + strconv.Itoa(i)
	}
	return p, nil
}
