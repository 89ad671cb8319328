package procmem

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The CPU a server's cores gave to whom during a window: per-CPU /proc/stat says how
// busy the server's allowed cores were; the server's process tree's own times
// (/proc/<pid>/stat utime + stime) say how much of that was the server; planrun's own
// process (the client) is counted apart; the rest is other processes on the server's
// cores, its noisy neighbours. All of it in clock ticks, so no tick rate is assumed.

// ContendedAbove is the share of the server's allowed cores (in % of their capacity over
// the window) that other processes may use before a row is contended: a tenth of the
// cores is already as much as the seed's ±10% stability rule tolerates.
const ContendedAbove = 10.0

// CPUInterval is the CPU sampler's period when none is given: each reading is one read of
// /proc/stat and one of each process's stat, far cheaper than a memory reading.
const CPUInterval = 250 * time.Millisecond

// CPUPoint is the cores' use over one interval of the window, in % of the cores'
// capacity (100: every allowed core busy throughout): the server tree's, the client's
// (its part on these cores) and everyone else's.
type CPUPoint struct {
	At                      time.Duration // the interval's end, from the window's start
	Server, Client, Others  float64
	ServerCores, OtherCores float64 // the same in cores (Server% × cores / 100)
}

// CPUSummary is the window's CPU on the server's allowed cores.
type CPUSummary struct {
	// Cores is the server tree's allowed CPU list ("1", "0-3"), N how many cores.
	Cores string
	N     int
	// ServerPct, ClientPct and OthersPct are the shares of the cores' capacity over the
	// whole window: the server tree's, planrun's own process's (its CPU time times the
	// part of its allowed cores that are the server's: the kernel does not say which
	// core ran it), and the rest of the cores' busy time, which other processes used.
	ServerPct, ClientPct, OthersPct float64
	// Start is when the sampling began (the points' At are after it); Series is each
	// interval's shares, in order.
	Start  time.Time
	Series []CPUPoint
	// Note says why there is no figure ("" when there is one).
	Note string
}

// Contended reports whether other processes took more than ContendedAbove of the cores.
func (s CPUSummary) Contended() bool { return s.Note == "" && s.OthersPct > ContendedAbove }

// cpuTicks is one core set's busy and total ticks from /proc/stat.
type cpuTicks struct{ busy, total uint64 }

// coreTicks sums /proc/stat's lines of the given cores: busy is user + nice + system +
// irq + softirq + steal (guest time is inside user), total adds idle and iowait.
func coreTicks(root string, cores []int) (cpuTicks, error) {
	b, err := os.ReadFile(filepath.Join(root, "stat"))
	if err != nil {
		return cpuTicks{}, err
	}
	want := map[int]bool{}
	for _, c := range cores {
		want[c] = true
	}
	var t cpuTicks
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil || !want[n] {
			continue
		}
		var v [8]uint64
		for i := range v {
			if i+1 < len(f) {
				v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
			}
		}
		user, nice, system, idle, iowait, irq, softirq, steal := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		busy := user + nice + system + irq + softirq + steal
		t.busy += busy
		t.total += busy + idle + iowait
		found++
	}
	if found != len(want) {
		return t, fmt.Errorf("%s has %d of the %d cores asked", filepath.Join(root, "stat"), found, len(want))
	}
	return t, nil
}

// procTicks is a process's utime + stime in ticks (its threads' together); ok is false
// when it is gone.
func procTicks(root string, pid int) (uint64, bool) {
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	s, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	return u + s, err1 == nil && err2 == nil
}

// CPUSampler follows the CPU of a server's allowed cores through a window.
type CPUSampler struct {
	root     string
	cores    []int
	tree     func() []int
	client   int     // planrun's pid
	overlap  float64 // the part of the client's allowed cores that are the server's
	interval time.Duration
	start    time.Time

	mu        sync.Mutex
	last      cpuTicks
	first     cpuTicks
	procs     map[int]uint64 // each tree process's ticks at the last reading
	clientAt  uint64
	serverSum uint64 // the tree's ticks since the window started
	clientSum uint64
	series    []CPUPoint
	err       error

	stop chan struct{}
	done chan struct{}
	once sync.Once
	sum  CPUSummary
}

// StartCPU samples, every interval (CPUInterval when zero) until Stop, the cores the
// processes tree returns may run on (read now, from their Cpus_allowed_list), the tree's
// own CPU time and that of planrun's process (client). tree is called at every reading:
// a process that joins the tree later (a runner) counts from its first reading, one that
// exits keeps what it had used by the last.
func StartCPU(interval time.Duration, tree func() []int, client int) *CPUSampler {
	return startCPU("/proc", interval, tree, client)
}

func startCPU(root string, interval time.Duration, tree func() []int, client int) *CPUSampler {
	if interval <= 0 {
		interval = CPUInterval
	}
	s := &CPUSampler{root: root, tree: tree, client: client, interval: interval, procs: map[int]uint64{},
		stop: make(chan struct{}), done: make(chan struct{}), start: time.Now()}
	pids := tree()
	seen := map[int]bool{}
	for _, pid := range pids {
		if _, cores, err := cpusAllowed(root, pid); err == nil {
			for _, c := range cores {
				seen[c] = true
			}
		}
	}
	if len(seen) == 0 {
		return cpuUnavailable("no CPU share: the server's processes were not found")
	}
	for c := range seen {
		s.cores = append(s.cores, c)
	}
	slices.Sort(s.cores)
	s.overlap = 1
	if _, own, err := cpusAllowed(root, client); err == nil && len(own) > 0 {
		in := 0
		for _, c := range own {
			if seen[c] {
				in++
			}
		}
		s.overlap = float64(in) / float64(len(own))
	}
	first, err := coreTicks(root, s.cores)
	if err != nil {
		return cpuUnavailable("no CPU share: " + err.Error())
	}
	s.first, s.last = first, first
	for _, pid := range pids {
		if t, ok := procTicks(root, pid); ok {
			s.procs[pid] = t
		}
	}
	s.clientAt, _ = procTicks(root, client)
	go s.loop()
	return s
}

func cpuUnavailable(note string) *CPUSampler {
	s := &CPUSampler{done: make(chan struct{})}
	s.sum.Note = note
	close(s.done)
	return s
}

// cpusAllowed is CPUsAllowed under root.
func cpusAllowed(root string, pid int) (string, []int, error) {
	if root == "/proc" {
		return CPUsAllowed(pid)
	}
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "status"))
	if err != nil {
		return "", nil, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			list := strings.TrimSpace(v)
			cores, err := parseCPUList(list)
			return list, cores, err
		}
	}
	return "", nil, fmt.Errorf("no Cpus_allowed_list for %d", pid)
}

func (s *CPUSampler) loop() {
	defer close(s.done)
	tk := time.NewTicker(s.interval)
	defer tk.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tk.C:
			s.read()
		}
	}
}

// read takes one reading and adds the interval since the last as a point.
func (s *CPUSampler) read() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now, err := coreTicks(s.root, s.cores)
	if err != nil {
		s.err = err
		return
	}
	var server uint64
	procs := map[int]uint64{}
	for _, pid := range s.tree() {
		t, ok := procTicks(s.root, pid)
		if !ok {
			continue
		}
		procs[pid] = t
		if prev, ok := s.procs[pid]; ok {
			if t > prev {
				server += t - prev
			}
		} else {
			server += t // it joined the tree since the last reading: all its time is new
		}
	}
	s.procs = procs
	var client uint64
	if t, ok := procTicks(s.root, s.client); ok && t > s.clientAt {
		client, s.clientAt = t-s.clientAt, t
	}
	s.serverSum += server
	s.clientSum += client
	total, busy := now.total-s.last.total, now.busy-s.last.busy
	s.last = now
	if total == 0 {
		return
	}
	p := shares(busy, total, server, float64(client)*s.overlap)
	p.At = time.Since(s.start)
	n := float64(len(s.cores))
	p.ServerCores, p.OtherCores = p.Server*n/100, p.Others*n/100
	s.series = append(s.series, p)
}

// shares is the point of busy ticks of total on the cores, server's and client's of them.
func shares(busy, total, server uint64, client float64) CPUPoint {
	t := float64(total)
	others := float64(busy) - float64(server) - client
	return CPUPoint{Server: 100 * float64(server) / t, Client: 100 * client / t, Others: 100 * max(others, 0) / t}
}

// Stop takes a last reading, ends the sampling and returns the window's summary. Calling
// it again returns the same summary.
func (s *CPUSampler) Stop() CPUSummary {
	s.once.Do(func() {
		if s.stop == nil {
			return // unavailable
		}
		close(s.stop)
		<-s.done
		s.read()
		s.mu.Lock()
		defer s.mu.Unlock()
		sum := CPUSummary{Cores: formatCPUList(s.cores), N: len(s.cores), Start: s.start, Series: s.series}
		total, busy := s.last.total-s.first.total, s.last.busy-s.first.busy
		if total == 0 {
			sum.Note = "no CPU share: the window was shorter than the kernel's clock tick"
			if s.err != nil {
				sum.Note = "no CPU share: " + s.err.Error()
			}
		} else {
			p := shares(busy, total, s.serverSum, float64(s.clientSum)*s.overlap)
			sum.ServerPct, sum.ClientPct, sum.OthersPct = p.Server, p.Client, p.Others
		}
		s.sum = sum
	})
	return s.sum
}
