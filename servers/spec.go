package servers

import (
	"fmt"
	"strings"
	"syscall"
	"time"
)

// Defaults applied when a Spec leaves a field zero.
const (
	// DefaultReadyTimeout is long because a vLLM server loads its weights before it
	// answers /health.
	DefaultReadyTimeout = 5 * time.Minute
	// DefaultGrace is the time between the stop signal and SIGKILL.
	DefaultGrace = 10 * time.Second
	// DefaultStopSignal is sent to the process group first.
	DefaultStopSignal = "SIGTERM"
	// DefaultPollInterval is the gap between two readiness checks.
	DefaultPollInterval = 200 * time.Millisecond
	// LogTailLines is how many log lines an error shows.
	LogTailLines = 20
)

// Spec describes one server a plan manages, as the plan's server block gives it.
type Spec struct {
	// Name identifies the server; the Manager reuses a running server of the same Name.
	Name string
	// Command is the program and its arguments (no shell). A name without a slash is
	// looked up in planrun's PATH; a relative path is relative to Dir.
	Command []string
	// Env is added to planrun's environment (and to Options.Env); it wins on conflicts.
	Env map[string]string
	// Dir is the working directory; empty means planrun's.
	Dir string
	// ReadyURL is polled with GET until it answers 2xx; empty means ready once started.
	ReadyURL string
	// ReadyTimeout bounds the wait for ReadyURL; zero means DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// StopSignal is sent to the process group to stop it ("SIGTERM" when empty).
	StopSignal string
	// Grace is how long the group may take to exit before SIGKILL; zero means DefaultGrace.
	Grace time.Duration
	// Log is the file the server's stdout and stderr are appended to. When empty they go
	// to a temporary file that is removed once the server is stopped.
	Log string
	// CPUs restricts the server, and every process it starts, to these CPU cores (a
	// hardware block's cpus); none means unrestricted. Linux only.
	CPUs []int
	// Setup commands run one after another once the server is ready, with the same
	// environment and directory, their output appended to the log.
	Setup [][]string
}

// ParseSignal turns a stop_signal value ("SIGTERM", "TERM", "sigint", ...) into a
// signal; the empty string means DefaultStopSignal. The plan package may call it to
// report a bad name as a diagnostic before anything runs.
func ParseSignal(name string) (syscall.Signal, error) {
	if name == "" {
		name = DefaultStopSignal
	}
	n := strings.ToUpper(strings.TrimSpace(name))
	if !strings.HasPrefix(n, "SIG") {
		n = "SIG" + n
	}
	if s, ok := signals[n]; ok {
		return s, nil
	}
	return 0, fmt.Errorf("unknown stop signal %q (want one of SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGKILL, SIGUSR1, SIGUSR2)", name)
}

func (s *Spec) readyTimeout() time.Duration {
	if s.ReadyTimeout > 0 {
		return s.ReadyTimeout
	}
	return DefaultReadyTimeout
}

func (s *Spec) grace() time.Duration {
	if s.Grace > 0 {
		return s.Grace
	}
	return DefaultGrace
}
