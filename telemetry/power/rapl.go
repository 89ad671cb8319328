package power

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// SysfsPowercap is where Linux exposes RAPL's energy counters.
const SysfsPowercap = "/sys/class/powercap"

// raplZone is a top-level RAPL zone (intel-rapl:0, a CPU package); its subzones
// (intel-rapl:0:0, the cores or DRAM inside it) are counted within it, so they are
// not added again. AMD's RAPL appears under the same names.
var raplZone = regexp.MustCompile(`^intel-rapl:[0-9]+$`)

// rapl reads the sum of every package's energy counter.
type rapl struct {
	root  string
	zones []raplCounter
	names []string
}

// raplCounter is one zone's energy_uj, unwrapped: it wraps to zero past
// max_energy_range_uj (every few minutes to hours, with the load), so a reading lower
// than the last one has wrapped once (readings are taken far more often than that).
type raplCounter struct {
	path     string
	maxRange uint64
	last     uint64
	total    float64 // joules since the first reading
	started  bool
}

// RAPL opens the RAPL package counters under root (SysfsPowercap unless a test gives
// its own tree). The error says why they cannot be read: none there (a VM, a CPU
// without RAPL), or energy_uj readable by root only (Linux since 5.10).
func RAPL(root string) (Source, error) {
	if root == "" {
		root = SysfsPowercap
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("rapl unreadable: %w (no powercap on this machine)", err)
	}
	r := &rapl{root: root}
	for _, e := range entries {
		if !raplZone.MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		c := raplCounter{path: filepath.Join(dir, "energy_uj")}
		if _, err := readUint(c.path); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return nil, fmt.Errorf("rapl unreadable: %w (energy_uj is readable by root only since Linux 5.10: run as root)", err)
			}
			return nil, fmt.Errorf("rapl unreadable: %w", err)
		}
		if c.maxRange, err = readUint(filepath.Join(dir, "max_energy_range_uj")); err != nil {
			return nil, fmt.Errorf("rapl unreadable: %w", err)
		}
		name := e.Name()
		if b, err := os.ReadFile(filepath.Join(dir, "name")); err == nil {
			name = strings.TrimSpace(string(b))
		}
		r.zones = append(r.zones, c)
		r.names = append(r.names, name)
	}
	if len(r.zones) == 0 {
		return nil, fmt.Errorf("rapl unreadable: no intel-rapl zone under %s (a virtual machine, or a CPU without RAPL)", root)
	}
	sort.Strings(r.names)
	return r, nil
}

func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// Read sums the packages' energy since the first reading, in joules.
func (r *rapl) Read(context.Context) (float64, error) {
	var sum float64
	for i := range r.zones {
		c := &r.zones[i]
		v, err := readUint(c.path)
		if err != nil {
			return 0, err
		}
		if c.started {
			d := v - c.last
			if v < c.last { // wrapped past max_energy_range_uj to zero
				d = c.maxRange - c.last + v
			}
			c.total += float64(d) / 1e6
		}
		c.last, c.started = v, true
		sum += c.total
	}
	return sum, nil
}

func (r *rapl) Counter() bool { return true }

func (r *rapl) String() string {
	return fmt.Sprintf("rapl %s (%s)", strings.Join(r.names, "+"), r.root)
}
