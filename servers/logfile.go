package servers

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// serverLog is the file a server's (and its setup commands') output goes to.
type serverLog struct {
	f    *os.File
	path string
	temp bool // created by planrun; removed once the server is stopped
}

func openLog(spec *Spec) (*serverLog, error) {
	if spec.Log == "" {
		f, err := os.CreateTemp("", "planrun-server-"+safeName(spec.Name)+"-*.log")
		if err != nil {
			return nil, fmt.Errorf("server %q: log: %w", spec.Name, err)
		}
		return &serverLog{f: f, path: f.Name(), temp: true}, nil
	}
	if dir := filepath.Dir(spec.Log); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("server %q: log: %w", spec.Name, err)
		}
	}
	// Appended: the log of a plan is a ledger across starts, like the results CSV.
	f, err := os.OpenFile(spec.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("server %q: log: %w", spec.Name, err)
	}
	return &serverLog{f: f, path: spec.Log}, nil
}

// mark writes a header line and returns the log size after it, where the output that
// follows begins (the start of the tail an error shows).
func (l *serverLog) mark(format string, args ...any) int64 {
	fmt.Fprintf(l.f, "==> planrun: "+format+"\n", args...)
	if st, err := l.f.Stat(); err == nil {
		return st.Size()
	}
	return 0
}

// tail returns the last n lines written at or after offset from.
func (l *serverLog) tail(from int64, n int) []string {
	f, err := os.Open(l.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	// A crash usually explains itself in the last lines; 64 KiB is plenty for 20 of them.
	if start := st.Size() - 64<<10; start > from {
		from = start
	}
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	lines := strings.Split(string(bytes.TrimRight(b, "\n")), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

func (l *serverLog) close() {
	l.f.Close()
	if l.temp {
		os.Remove(l.path)
	}
}

// formatTail indents log lines under an error message.
func formatTail(lines []string) string {
	if len(lines) == 0 {
		return " (log is empty)"
	}
	var b strings.Builder
	b.WriteString("; last log lines:")
	for _, l := range lines {
		b.WriteString("\n  | ")
		b.WriteString(l)
	}
	return b.String()
}

// safeName keeps a server name usable in a temp file name.
func safeName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, name)
}
