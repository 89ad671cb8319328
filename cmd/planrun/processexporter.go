package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/planrun/planrun/telemetry/procmem"
	"github.com/planrun/planrun/telemetry/procmem/exporter"
)

func init() {
	register("process-exporter", "serve, on a server's host, the memory of its processes for apply to scrape (telemetry { process = URL })", runProcessExporter)
}

// processExporterArgs are process-exporter's flags.
type processExporterArgs struct {
	Listen string
	Group  exporter.Group
}

func parseProcessExporter(args []string, stderr io.Writer) (*processExporterArgs, error) {
	a := &processExporterArgs{}
	fs := newUsageFlagSet(stderr, "process-exporter", `Usage: planrun process-exporter -match REGEXP [-name NAME] [-listen ADDR]

Serves, until Ctrl-C, on the host where a server runs, the memory of the processes whose
command line matches REGEXP and of every process below them (a server and the workers it
forks), read from /proc at each scrape: the RSS sum and, where smaps_rollup exists, the PSS
sum. The metrics are ncabatoff/process-exporter's (namedprocess_namegroup_memory_bytes,
namedprocess_namegroup_num_procs), so a hardware block's telemetry { process = URL } reads
this exporter or that one alike. This process itself is never counted.

Flags:
`)
	var match string
	fs.StringVar(&a.Listen, "listen", exporter.DefaultListen, "listen address; /metrics is served there")
	fs.StringVar(&match, "match", "", "regular expression over the command line (arguments joined by spaces); required")
	fs.StringVar(&a.Group.Name, "name", "", "the group's name in the metrics (groupname); default: the -match expression")
	operands, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(operands) > 0 {
		return nil, fmt.Errorf("unexpected argument %q", operands[0])
	}
	if match == "" {
		return nil, errors.New("-match is required: a regular expression for the server's command line, e.g. -match 'ollama serve'")
	}
	if a.Group.Match, err = regexp.Compile(match); err != nil {
		return nil, fmt.Errorf("-match: %w", err)
	}
	if a.Group.Name == "" {
		a.Group.Name = match
	}
	return a, nil
}

func runProcessExporter(ctx context.Context, env *Env, args []string) int {
	a, err := parseProcessExporter(args, env.Stderr)
	if err != nil {
		return usageExit(env, "process-exporter", err)
	}
	if _, ok := procmem.Processes(); !ok {
		fmt.Fprintln(env.Stderr, "planrun process-exporter: this system has no /proc to read processes from (Linux only)")
		return exitError
	}
	l, err := net.Listen("tcp", a.Listen)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun process-exporter: %v\n", err)
		return exitError
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", exporter.Handler([]exporter.Group{a.Group}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	now := a.Group.Read() // not this process, whose command line holds the pattern
	fmt.Fprintf(env.Stdout, "process-exporter serving http://%s/metrics: group %q, the processes matching %q and below them (now %d, %.3f GB RSS)\n",
		reachableAddr(l.Addr()), a.Group.Name, a.Group.Match, now.Processes, float64(now.RSS)/1e9)
	select {
	case <-ctx.Done():
	case <-env.Interrupts: // nil in tests: never fires
	}
	srv.Close()
	return exitOK
}

// reachableAddr is the listener's address as another machine would reach it: the host's
// name in place of an unspecified IP (":9256" listens on every address).
func reachableAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	host, err := os.Hostname()
	if err != nil {
		return a.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}
