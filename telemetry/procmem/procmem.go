// Package procmem measures the memory a server's processes hold while a benchmark window
// runs: the figure that stands for VRAM when the model runs on the CPU (a laptop, a CPU
// box, a Mac's unified memory), where NVML has nothing to say.
//
// On Linux each reading sums, over the server's process tree, the resident set (VmRSS in
// /proc/<pid>/status) and the proportional set size (Pss in /proc/<pid>/smaps_rollup).
// RSS counts a page shared by two of the processes twice; PSS splits it, so PSS summed
// over a tree is the memory the tree really holds. A sampler takes a baseline when it
// starts (the model loaded, no load yet) and keeps the peak until it stops. Elsewhere
// there is no /proc, and the Summary's Note says so.
//
// Processes, Descendants and Matching list the processes behind a name (a server and the
// workers it forked); StartFunc samples readings taken elsewhere, such as a process
// exporter on the server's own host (package telemetry/procmem/exporter).
package procmem

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sources name where a figure comes from; they are written into results as they are.
const (
	SourcePSS = "process tree PSS (/proc/<pid>/smaps_rollup)"
	SourceRSS = "process tree RSS (/proc/<pid>/status VmRSS)"
)

// DefaultInterval is the sampler's period when none is given. smaps_rollup walks every
// mapping of a process, so reading it much faster than this costs the server CPU.
const DefaultInterval = 200 * time.Millisecond

// Reading is one look at a set of processes: their memory summed, in bytes.
type Reading struct {
	RSS uint64
	PSS uint64
	// HasPSS is false when some process had no smaps_rollup (kernels before 4.14): then
	// PSS is not a sum over the tree and is left zero.
	HasPSS bool
	// Processes counts the processes read; one that exited while being read is left out.
	Processes int
}

// Read sums the memory of the live processes among pids.
func Read(pids []int) Reading {
	r := Reading{HasPSS: true}
	for _, pid := range pids {
		rss, ok := statusRSS(pid)
		if !ok {
			continue // exited
		}
		r.Processes++
		r.RSS += rss
		if pss, ok := rollupPSS(pid); ok {
			r.PSS += pss
		} else {
			r.HasPSS = false
		}
	}
	if r.Processes == 0 || !r.HasPSS {
		r.HasPSS, r.PSS = false, 0
	}
	return r
}

// statusRSS is VmRSS from /proc/<pid>/status. A kernel thread or a zombie has none and
// holds no memory of its own, which counts as zero.
func statusRSS(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	v, _ := kBField(b, "VmRSS:")
	return v, true
}

// rollupPSS is Pss from /proc/<pid>/smaps_rollup.
func rollupPSS(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0, false
	}
	return kBField(b, "Pss:")
}

// kBField finds the line "<key> <n> kB" and returns n·1024.
func kBField(b []byte, key string) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte(key)) {
			continue
		}
		f := bytes.Fields(line[len(key):])
		if len(f) == 0 {
			return 0, false
		}
		n, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil {
			return 0, false
		}
		return n * 1024, true
	}
	return 0, false
}

// Summary is the process memory of one measured window.
type Summary struct {
	// Note says why there are no figures; empty when the processes were read.
	Note string `json:"note,omitempty"`
	// Origin names who read the processes when it was not this machine's /proc: a
	// process exporter on the server's host ("process-exporter URL group NAME").
	Origin string `json:"origin,omitempty"`
	// Source is SourcePSS when every reading had PSS (PeakPSS is then a sum over the
	// tree), else SourceRSS; with an Origin, the origin and "PSS" or "RSS".
	Source string `json:"source,omitempty"`

	BaselineRSS uint64 `json:"baseline_rss_bytes"`
	PeakRSS     uint64 `json:"peak_rss_bytes"`
	BaselinePSS uint64 `json:"baseline_pss_bytes"`
	PeakPSS     uint64 `json:"peak_pss_bytes"`
	HasPSS      bool   `json:"has_pss"`
	// MaxProcesses is the most processes one reading found (Ollama: the server and its runner).
	MaxProcesses int `json:"max_processes"`
	Ticks        int `json:"ticks"`
	// Failures counts the readings that found nothing (an exporter that did not answer,
	// a server whose processes were gone); LastError is the last one's reason.
	Failures  int    `json:"failures,omitempty"`
	LastError string `json:"last_error,omitempty"`
	// BaselineLate is set when the window's first reading failed: the baseline is then
	// the first reading that succeeded, taken under load.
	BaselineLate bool `json:"baseline_late,omitempty"`
}

// source names a figure of kind "RSS" or "PSS" as the summary's readings were taken.
func (s Summary) source(kind string) string {
	if s.Origin != "" {
		return s.Origin + ", " + kind
	}
	if kind == "PSS" {
		return SourcePSS
	}
	return SourceRSS
}

// Peak is the window's headline figure and its source: the RSS sum. PSS is the fairer
// share of a tree's memory, but it moves with processes outside the tree: a page of the
// server's binary that another running copy maps counts half, so PSS changed by 17 MB
// between two levels of one Ollama server while other Ollama servers came and went on
// the machine, and its RSS by 3 MB (docs/seed-table.md). RSS counts a page the tree's own
// processes share once per process, which for one server is a constant.
func (s Summary) Peak() (bytes uint64, source string) { return s.PeakRSS, s.source("RSS") }

// Baseline is Peak's figure before the load started.
func (s Summary) Baseline() uint64 { return s.BaselineRSS }

// Sampler reads a process tree at a fixed interval during one measured window.
type Sampler struct {
	read     func(context.Context) (Reading, error)
	interval time.Duration
	ctx      context.Context
	cancel   context.CancelFunc

	mu  sync.Mutex
	sum Summary

	stopOnce sync.Once
	done     chan struct{}
}

// errNoProcess is a reading of this machine that found none of the server's processes.
var errNoProcess = errors.New("the server's processes were not found")

// Start reads the processes pids returns now (the baseline) and then every interval
// (DefaultInterval when zero) until Stop. pids is called at every reading, so a process
// the server starts during the window (a runner) is counted from then on.
func Start(interval time.Duration, pids func() []int) *Sampler {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		return Unavailable("no process memory: this system has no /proc")
	}
	first := Read(pids())
	if first.Processes == 0 {
		return Unavailable("no process memory: " + errNoProcess.Error())
	}
	return start(interval, "", first, nil, func(context.Context) (Reading, error) {
		r := Read(pids())
		if r.Processes == 0 {
			return r, errNoProcess
		}
		return r, nil
	})
}

// StartFunc samples what read returns, now (the baseline) and then every interval
// (DefaultInterval when zero) until Stop: processes read elsewhere than this machine's
// /proc, by origin, which names the source in the summary. A reading that fails is
// counted and the sampling goes on; read must return once its context ends, which Stop
// does to a reading in flight.
func StartFunc(interval time.Duration, origin string, read func(context.Context) (Reading, error)) *Sampler {
	ctx, cancel := context.WithCancel(context.Background())
	first, err := read(ctx)
	cancel()
	return start(interval, origin, first, err, read)
}

func start(interval time.Duration, origin string, first Reading, err error, read func(context.Context) (Reading, error)) *Sampler {
	if interval <= 0 {
		interval = DefaultInterval
	}
	s := &Sampler{read: read, interval: interval, done: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.sum.Origin = origin
	s.add(first, err)
	go s.loop()
	return s
}

// Unavailable is a sampler that reads nothing and whose Summary carries note.
func Unavailable(note string) *Sampler {
	s := &Sampler{done: make(chan struct{})}
	s.sum.Note = note
	close(s.done)
	return s
}

func (s *Sampler) loop() {
	defer close(s.done)
	tk := time.NewTicker(s.interval)
	defer tk.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-tk.C:
			r, err := s.read(s.ctx)
			if err != nil && s.ctx.Err() != nil {
				return // Stop cut it short; Stop's own reading stands in for it
			}
			s.add(r, err)
		}
	}
}

func (s *Sampler) add(r Reading, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.sum.Failures++
		s.sum.LastError = err.Error()
		return
	}
	if s.sum.Ticks == 0 {
		s.sum.BaselineRSS, s.sum.BaselinePSS, s.sum.HasPSS = r.RSS, r.PSS, r.HasPSS
		s.sum.BaselineLate = s.sum.Failures > 0
	}
	s.sum.Ticks++
	s.sum.PeakRSS = max(s.sum.PeakRSS, r.RSS)
	s.sum.MaxProcesses = max(s.sum.MaxProcesses, r.Processes)
	// PSS is a sum over the tree only when every reading had it.
	s.sum.HasPSS = s.sum.HasPSS && r.HasPSS
	s.sum.PeakPSS = max(s.sum.PeakPSS, r.PSS)
}

// Stop takes a last reading, ends sampling and returns the window's Summary. Calling it
// again returns the same Summary.
func (s *Sampler) Stop() Summary {
	s.stopOnce.Do(func() {
		if s.read == nil {
			return // Unavailable
		}
		s.cancel()
		<-s.done
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s.add(s.read(ctx))
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.sum.Ticks == 0 {
			s.sum.Note = "no process memory: " + strings.TrimPrefix(s.sum.Origin+": ", ": ") + s.sum.LastError
			return
		}
		s.sum.Source = s.sum.source("RSS")
		if s.sum.HasPSS {
			s.sum.Source = s.sum.source("PSS")
		} else {
			s.sum.PeakPSS, s.sum.BaselinePSS = 0, 0
		}
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sum
}

// String is the summary in a line: "peak 0.21 GB process tree RSS (…), baseline 0.20 GB, 2 processes".
func (s Summary) String() string {
	if s.Note != "" {
		return s.Note
	}
	peak, src := s.Peak()
	return fmt.Sprintf("peak %.3f GB %s, baseline %.3f GB, %d processes", float64(peak)/1e9, src, float64(s.Baseline())/1e9, s.MaxProcesses)
}

// CPUsAllowed is the CPU list a process may run on, as the kernel says in
// /proc/<pid>/status Cpus_allowed_list ("0-1"), with the cores it names.
func CPUsAllowed(pid int) (list string, cores []int, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "", nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("Cpus_allowed_list:")); ok {
			list = string(bytes.TrimSpace(v))
			cores, err = parseCPUList(list)
			return list, cores, err
		}
	}
	return "", nil, fmt.Errorf("/proc/%d/status has no Cpus_allowed_list", pid)
}

// GroupCPUsAllowed is the union of the CPU lists the processes may run on, in the
// kernel's format ("0-1,3"): a server's process tree, whose processes an engine may pin
// apart (vLLM's engine core on some cores, its API server on the others). Processes
// that ended meanwhile are left out; an error only when none could be read.
func GroupCPUsAllowed(pids []int) (string, error) {
	seen := map[int]bool{}
	var first error
	for _, pid := range pids {
		_, cores, err := CPUsAllowed(pid)
		if err != nil {
			first = cmp.Or(first, err)
			continue
		}
		for _, c := range cores {
			seen[c] = true
		}
	}
	if len(seen) == 0 {
		return "", cmp.Or(first, errors.New("no process to read"))
	}
	return formatCPUList(slices.Sorted(maps.Keys(seen))), nil
}

// formatCPUList writes sorted cores in the kernel's CPU list format, runs as ranges.
func formatCPUList(cores []int) string {
	var b strings.Builder
	for i := 0; i < len(cores); {
		j := i
		for j+1 < len(cores) && cores[j+1] == cores[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cores[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(cores[j]))
		}
		i = j + 1
	}
	return b.String()
}

// parseCPUList reads the kernel's CPU list format ("0-3,6").
func parseCPUList(s string) ([]int, error) {
	var cores []int
	for _, part := range bytes.Split([]byte(s), []byte(",")) {
		lo, hi, isRange := bytes.Cut(part, []byte("-"))
		a, err := strconv.Atoi(string(lo))
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(string(hi))
		}
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %w", s, err)
		}
		for c := a; c <= b; c++ {
			cores = append(cores, c)
		}
	}
	return cores, nil
}

// CPUModel is the processor's model name from /proc/cpuinfo ("AMD EPYC 9654 96-Core
// Processor"); empty where there is none.
func CPUModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if ok && string(bytes.TrimSpace(k)) == "model name" {
			return string(bytes.TrimSpace(v))
		}
	}
	return ""
}
