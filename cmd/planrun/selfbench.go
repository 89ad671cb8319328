package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/planrun/planrun/load/selfbench"
	"github.com/planrun/planrun/servers/mockserver"
)

func init() {
	register("selfbench", "measure planrun's own client against the mock server at rising concurrency", runSelfbench)
}

// selfbenchArgs are selfbench's flags.
type selfbenchArgs struct {
	Cfg       selfbench.Config
	InProcess bool
	Markdown  bool
	// CPUProfile, when set, is where the client's CPU profile goes (go tool pprof).
	CPUProfile string
	// Unix puts the mock on a Unix socket instead of loopback TCP.
	Unix bool
	// socket is the child's Unix socket path, chosen by the parent.
	socket string
	// serveMock is the child half of a two-process run: serve the mock, print its URL,
	// exit when stdin closes.
	serveMock bool
}

func parseSelfbench(args []string, stderr io.Writer) (*selfbenchArgs, error) {
	a := &selfbenchArgs{Cfg: selfbench.DefaultConfig()}
	c := &a.Cfg
	fs := newUsageFlagSet(stderr, "selfbench", `Usage: planrun selfbench [flags]

Runs planrun's client (the timing core and the closed-loop executor) against the mock
server at each concurrency level and prints streams, tokens/s, client CPU per 1,000
tokens, and the error of TTFT and TPOT against the times the mock wrote its chunks.
The mock runs as a child process (planrun selfbench -serve-mock) unless -inprocess.

`)
	levels := fs.String("levels", "1,64,500,1000,2000", "comma-separated concurrency levels")
	fs.DurationVar(&c.TTFT, "ttft", c.TTFT, "the mock's time to first token")
	fs.DurationVar(&c.TPOT, "tpot", c.TPOT, "the mock's time per output token (one token per chunk)")
	fs.DurationVar(&c.Jitter, "jitter", 0, "±jitter on the mock's every token gap, so streams do not emit in lockstep")
	fs.IntVar(&c.Tokens, "tokens", c.Tokens, "output tokens per request")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "about how long each level's measured run lasts")
	fs.DurationVar(&c.Ramp, "ramp", c.Ramp, "spread each level's start over this long: the streams start evenly over it, and what they\nsend before it is over is not measured (0: all streams start at once)")
	fs.StringVar(&c.Protocol, "protocol", c.Protocol, "openai (SSE) or ollama (NDJSON)")
	fs.IntVar(&c.Agents, "agents", 1, "send each level from this many load agents, each a `planrun agent` process, this process\ntheir lead (1: from this process)")
	fs.BoolVar(&a.InProcess, "inprocess", false, "serve the mock in this process (CPU figures then include it)")
	fs.BoolVar(&a.Unix, "unix", false, "serve the mock on a Unix socket (loopback TCP's kernel cost, charged mostly to the\nsending mock, otherwise limits the pair first); the client's transport is unchanged but for its dialer")
	fs.StringVar(&a.socket, "socket", "", "internal: the Unix socket a -serve-mock child listens on")
	fs.BoolVar(&a.Markdown, "markdown", false, "print a Markdown table")
	fs.StringVar(&a.CPUProfile, "cpuprofile", "", "write this process's CPU profile to `file` (the client's, unless -inprocess)")
	fs.BoolVar(&a.serveMock, "serve-mock", false, "internal: serve the mock for a parent selfbench")
	operands, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(operands) > 0 {
		return nil, fmt.Errorf("unexpected argument %q", operands[0])
	}
	if c.Levels, err = parseCounts(*levels, "streams"); err != nil {
		return nil, fmt.Errorf("-levels: %w", err)
	}
	if c.Protocol != "openai" && c.Protocol != "ollama" {
		return nil, fmt.Errorf("-protocol: %q is not openai or ollama", c.Protocol)
	}
	if c.Tokens < 2 {
		return nil, errors.New("-tokens: at least 2, or TPOT is undefined")
	}
	if c.Agents < 1 {
		return nil, errors.New("-agents: at least 1")
	}
	if c.Agents > 1 && a.Unix {
		return nil, errors.New("-agents and -unix: the agents dial the mock over TCP")
	}
	if c.TTFT < 0 || c.TPOT < 0 || c.Jitter < 0 || c.Ramp < 0 || c.Duration <= 0 {
		return nil, errors.New("-ttft, -tpot, -jitter and -ramp must not be negative, -duration must be positive")
	}
	return a, nil
}

func runSelfbench(ctx context.Context, env *Env, args []string) int {
	a, err := parseSelfbench(args, env.Stderr)
	if err != nil {
		return usageExit(env, "selfbench", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-env.Interrupts:
			cancel()
		case <-ctx.Done():
		}
	}()
	if a.serveMock {
		return serveMockChild(ctx, env, a)
	}

	target, stop, code := a.startTarget(ctx, env)
	if code != exitOK {
		return code
	}
	defer stop()
	if a.CPUProfile != "" {
		stop, err := startCPUProfile(a.CPUProfile)
		if err != nil {
			fmt.Fprintf(env.Stderr, "planrun selfbench: %v\n", err)
			return exitError
		}
		defer stop()
	}
	if a.Cfg.Agents > 1 {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintf(env.Stderr, "planrun selfbench: %v\n", err)
			return exitError
		}
		a.Cfg.AgentCommand = []string{exe, "agent"}
	}
	a.printHeader(env, target)
	levels, err := selfbench.Run(ctx, a.Cfg, target, func(l selfbench.LevelReport) {
		fmt.Fprintf(env.Stderr, "  %d streams: %.0f tok/s\n", l.Streams, l.TokensPerSec)
	})
	if len(levels) > 0 {
		fmt.Fprintln(env.Stdout)
		selfbench.Write(env.Stdout, levels, a.Markdown)
		fmt.Fprintln(env.Stdout)
		fmt.Fprintln(env.Stdout, selfbench.Legend(a.InProcess))
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun selfbench: %v\n", err)
		return exitError
	}
	if ctx.Err() != nil {
		return exitInterrupted
	}
	return exitOK
}

// startTarget starts the mock the benchmark runs against: in this process or as a
// child, over TCP or (-unix) a socket in a directory of its own. stop ends it and
// removes the directory; code says why it could not start.
func (a *selfbenchArgs) startTarget(ctx context.Context, env *Env) (t selfbench.Target, stop func(), code int) {
	var cleanup []func()
	stop = func() {
		for _, f := range slices.Backward(cleanup) {
			f()
		}
	}
	if a.Unix {
		dir, err := os.MkdirTemp("", "planrun-selfbench-")
		if err != nil {
			fmt.Fprintf(env.Stderr, "planrun selfbench: %v\n", err)
			return t, stop, exitError
		}
		cleanup = append(cleanup, func() { os.RemoveAll(dir) })
		a.socket = filepath.Join(dir, "mock.sock")
	}
	if a.InProcess {
		srv := mockserver.New(a.Cfg.MockConfig())
		url, stopMock, err := listenMock(srv, a.socket)
		if err != nil {
			fmt.Fprintf(env.Stderr, "planrun selfbench: %v\n", err)
			stop()
			return t, func() {}, exitError
		}
		cleanup = append(cleanup, stopMock)
		t = selfbench.InProcess(srv, url)
		t.Socket = a.socket
		return t, stop, exitOK
	}
	url, stopMock, err := startMockChild(ctx, a, env.Stderr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun selfbench: starting the mock: %v (try -inprocess)\n", err)
		stop()
		return t, func() {}, exitError
	}
	cleanup = append(cleanup, stopMock)
	return selfbench.Remote(url, a.socket), stop, exitOK
}

// startCPUProfile profiles this process's CPU into path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// printHeader says what the benchmark runs: the protocol, where the mock is, its
// schedule, and the load agents if any.
func (a *selfbenchArgs) printHeader(env *Env, target selfbench.Target) {
	where := "as a child process"
	if a.InProcess {
		where = "in this process"
	}
	c := a.Cfg
	if a.socket != "" {
		where += " on a Unix socket"
	}
	fmt.Fprintf(env.Stdout, "selfbench: %s protocol, mock %s at %s: ttft=%s tpot=%s jitter=%s tokens=%d (1 per chunk), ~%s per level, ramp %s\n",
		c.Protocol, where, target.URL, c.TTFT, c.TPOT, c.Jitter, c.Tokens, c.Duration, c.Ramp)
	if c.Agents > 1 {
		fmt.Fprintf(env.Stdout, "selfbench: each level sent by %d load agents (planrun agent processes), this process merging their records\n", c.Agents)
	}
}

// mockChildArgs are the flags that give the child the parent's schedule and socket.
func mockChildArgs(a *selfbenchArgs) []string {
	c := a.Cfg
	args := []string{"selfbench", "-serve-mock", "-ttft", c.TTFT.String(), "-tpot", c.TPOT.String(),
		"-jitter", c.Jitter.String(), "-tokens", strconv.Itoa(c.Tokens)}
	if a.socket != "" {
		args = append(args, "-socket", a.socket)
	}
	return args
}

// listenMock serves srv on loopback TCP, or on the Unix socket when one is given (the
// URL's host is then only a name: the client dials the socket).
func listenMock(srv *mockserver.Server, socket string) (url string, stop func(), err error) {
	if socket == "" {
		return srv.Start("127.0.0.1:0")
	}
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return "", nil, err
	}
	return "http://mock.sock", srv.Serve(ln), nil
}

// startMockChild runs this executable as the mock in its own process, so the client's
// CPU figures are its own, and returns the mock's URL.
func startMockChild(ctx context.Context, a *selfbenchArgs, stderr io.Writer) (url string, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.CommandContext(ctx, exe, mockChildArgs(a)...)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		in.Close() // the child exits when its stdin closes
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://") {
		stop()
		return "", nil, fmt.Errorf("the child printed %q, not its URL (%v)", line, err)
	}
	return strings.TrimSpace(line), stop, nil
}

// serveMockChild is the child: serve, print the URL, wait for stdin to close.
func serveMockChild(ctx context.Context, env *Env, a *selfbenchArgs) int {
	srv := mockserver.New(a.Cfg.MockConfig())
	url, stop, err := listenMock(srv, a.socket)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun selfbench -serve-mock: %v\n", err)
		return exitError
	}
	defer stop()
	fmt.Fprintln(env.Stdout, url)
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, env.Stdin)
		close(closed)
	}()
	select {
	case <-closed:
	case <-ctx.Done():
	}
	return exitOK
}
