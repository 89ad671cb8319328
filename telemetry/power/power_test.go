package power

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/telemetry/gpu"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func sec(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func TestTraceEnergy(t *testing.T) {
	tr := Trace{Points: []Point{{sec(0), 0}, {sec(1), 100}, {sec(2), 300}, {sec(4), 500}}}
	for _, tc := range []struct {
		name       string
		start, end float64
		want       float64
		ok         bool
	}{
		{"on readings", 1, 2, 200, true},
		{"between readings", 0.5, 3, 400 - 50, true},
		{"whole trace", 0, 4, 500, true},
		{"empty window", 1.5, 1.5, 0, true},
		{"starts before the first reading", -0.1, 2, 0, false},
		{"ends after the last reading", 1, 4.1, 0, false},
		{"reversed", 2, 1, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tr.Energy(sec(tc.start), sec(tc.end))
			if ok != tc.ok || (ok && math.Abs(got-tc.want) > 1e-9) {
				t.Errorf("Energy(%g, %g) = %g, %v; want %g, %v", tc.start, tc.end, got, ok, tc.want, tc.ok)
			}
		})
	}
	if _, ok := (Trace{}).Energy(sec(0), sec(1)); ok {
		t.Error("an empty trace gave an energy")
	}
}

// fakeSource returns its readings in turn, an error where err is set.
type fakeSource struct {
	vals    []float64
	errs    []error
	counter bool
	n       int
}

func (f *fakeSource) Read(context.Context) (float64, error) {
	i := min(f.n, len(f.vals)-1)
	f.n++
	if i < len(f.errs) && f.errs[i] != nil {
		return 0, f.errs[i]
	}
	return f.vals[i], nil
}
func (f *fakeSource) Counter() bool  { return f.counter }
func (f *fakeSource) String() string { return "fake" }

// manual is a meter whose readings the test takes at the instants it chooses.
func manual(src Source, at ...float64) Trace {
	clock := sec(at[0])
	m := &Meter{src: src, interval: time.Second, now: func() time.Time { return clock }, done: make(chan struct{})}
	m.trace = Trace{Source: src.String(), Method: MethodIntegral}
	if src.Counter() {
		m.trace.Method = MethodCounter
	}
	for _, a := range at {
		clock = sec(a)
		m.read(context.Background())
	}
	return m.trace
}

func TestMeterIntegratesWatts(t *testing.T) {
	tr := manual(&fakeSource{vals: []float64{100, 200, 200, 0}}, 0, 1, 3, 4)
	want := []float64{0, 150, 550, 650}
	if len(tr.Points) != len(want) || tr.Method != MethodIntegral {
		t.Fatalf("trace %+v", tr)
	}
	for i, p := range tr.Points {
		if p.Joules != want[i] {
			t.Errorf("point %d: %g J, want %g", i, p.Joules, want[i])
		}
	}
}

func TestMeterCounterStartsAtZero(t *testing.T) {
	tr := manual(&fakeSource{vals: []float64{5000, 5100, 5400}, counter: true}, 0, 1, 2)
	if j, ok := tr.Energy(sec(0), sec(2)); !ok || j != 400 || tr.Method != MethodCounter || tr.Points[0].Joules != 0 {
		t.Errorf("energy %g %v, method %q, first %g", j, ok, tr.Method, tr.Points[0].Joules)
	}
}

func TestMeterFailedReadings(t *testing.T) {
	boom := errors.New("meter offline")
	tr := manual(&fakeSource{vals: []float64{100, 100, 100}, errs: []error{nil, boom, nil}}, 0, 1, 2)
	if tr.Failed != 1 || tr.LastError != "meter offline" || len(tr.Points) != 2 {
		t.Errorf("failed %d %q, %d points", tr.Failed, tr.LastError, len(tr.Points))
	}
	// Every reading failing: Stop says why there is no energy.
	m := start(context.Background(), &fakeSource{vals: []float64{0}, errs: []error{boom}}, time.Hour, time.Now)
	tr = m.Stop()
	if !strings.Contains(tr.Note, "meter offline") || !strings.Contains(tr.Note, "0 readings") {
		t.Errorf("note %q", tr.Note)
	}
}

// TestCommandConstantWatts: a command printing a constant wattage gives, over any
// window inside its readings, watts × window.
func TestCommandConstantWatts(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "meter.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho '187.5 W'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := Start(context.Background(), Command([]string{script}), 20*time.Millisecond)
	// Wait for readings, not for a time: a busy machine runs the command late.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		m.mu.Lock()
		n := len(m.trace.Points)
		m.mu.Unlock()
		if n >= 3 {
			break
		}
	}
	tr := m.Stop()
	if tr.Note != "" || tr.Failed > 0 || len(tr.Points) < 3 {
		t.Fatalf("trace: note %q, %d failed (%s), %d points", tr.Note, tr.Failed, tr.LastError, len(tr.Points))
	}
	first, last := tr.Points[0].At, tr.Points[len(tr.Points)-1].At
	for _, w := range [][2]time.Time{{first, last}, {first.Add(7 * time.Millisecond), last.Add(-3 * time.Millisecond)}} {
		j, ok := tr.Energy(w[0], w[1])
		want := 187.5 * w[1].Sub(w[0]).Seconds()
		if !ok || math.Abs(j-want) > 1e-9*want {
			t.Errorf("energy over %v: %g J (%v), want %g", w[1].Sub(w[0]), j, ok, want)
		}
	}
	if tr.Source != "command "+script || tr.Method != MethodIntegral {
		t.Errorf("source %q, method %q", tr.Source, tr.Method)
	}
}

func TestParseWatts(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want float64
		err  string
	}{
		{"231.5\n", 231.5, ""},
		{"  42W extra words", 42, ""},
		{"", 0, "printed nothing"},
		{"watts: 12", 0, "not a power in watts"},
		{"-3", 0, "not a power in watts"},
	} {
		got, err := parseWatts(tc.out, "m")
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) || got != tc.want {
			t.Errorf("parseWatts(%q) = %g, %v; want %g, %q", tc.out, got, err, tc.want, tc.err)
		}
	}
}

// powercap writes a fake /sys/class/powercap: two packages (one with a core subzone,
// which is inside its package and must not be added again).
func powercap(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	zone := func(name, label, energy, maxRange string) {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, v := range map[string]string{"name": label, "energy_uj": energy, "max_energy_range_uj": maxRange} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	zone("intel-rapl:0", "package-0", "1000000", "262143328850")
	zone("intel-rapl:0:0", "core", "500000", "262143328850")
	zone("intel-rapl:1", "package-1", "262143000000", "262143328850")
	return root
}

func setEnergy(t *testing.T, root, zone, uj string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, zone, "energy_uj"), []byte(uj+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRAPL(t *testing.T) {
	root := powercap(t)
	src, err := RAPL(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := "rapl package-0+package-1 (" + root + ")"; src.String() != want || !src.Counter() {
		t.Errorf("source %q, want %q", src.String(), want)
	}
	read := func() float64 {
		j, err := src.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	if j := read(); j != 0 {
		t.Errorf("first reading %g J, want 0 (only differences count)", j)
	}
	setEnergy(t, root, "intel-rapl:0", "3000000")      // +2 J
	setEnergy(t, root, "intel-rapl:0:0", "900000000")  // a subzone: ignored
	setEnergy(t, root, "intel-rapl:1", "262143328850") // +0.32885 J, at the top of its range
	if j := read(); math.Abs(j-2.32885) > 1e-9 {
		t.Errorf("second reading %g J, want 2.32885", j)
	}
	setEnergy(t, root, "intel-rapl:1", "4000000") // wrapped to zero, then 4 J more
	if j := read(); math.Abs(j-6.32885) > 1e-9 {
		t.Errorf("after the wrap %g J, want 6.32885", j)
	}
}

func TestRAPLUnreadable(t *testing.T) {
	empty := t.TempDir()
	garbled := powercap(t)
	setEnergy(t, garbled, "intel-rapl:1", "lots")
	for _, tc := range []struct {
		name, root, want string
	}{
		{"no powercap", filepath.Join(empty, "missing"), "no powercap on this machine"},
		{"no rapl zone", empty, "no intel-rapl zone"},
		{"garbled counter", garbled, "invalid syntax"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RAPL(tc.root)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "rapl unreadable") {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPrometheus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/metrics":
			w.Write([]byte("# TYPE DCGM_FI_DEV_POWER_USAGE gauge\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 120.5\nDCGM_FI_DEV_POWER_USAGE{gpu=\"1\"} 80\n"))
		case r.URL.Query().Get("query") == "sum(plug_watts)":
			w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000.1,"312.25"]}]}}`))
		case r.URL.Query().Get("query") == "by_gpu":
			w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"gpu":"0"},"value":[1,"10"]},{"metric":{"gpu":"1"},"value":[1,"5.5"]}]}}`))
		case r.URL.Query().Get("query") == "nothing":
			w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
		default:
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`))
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name, url, query string
		want             float64
		err              string
	}{
		{"exporter", srv.URL + "/metrics", "DCGM_FI_DEV_POWER_USAGE", 200.5, ""},
		{"exporter without the metric", srv.URL + "/metrics", "plug_watts", 0, "has no metric plug_watts"},
		{"query", srv.URL, "sum(plug_watts)", 312.25, ""},
		{"query summed", srv.URL + "/", "by_gpu", 15.5, ""},
		{"no series", srv.URL, "nothing", 0, "matched no series"},
		{"bad query", srv.URL, "sum(", 0, "400 Bad Request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Prometheus(srv.Client(), tc.url, tc.query).Read(context.Background())
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) || got != tc.want {
				t.Errorf("Read = %g, %v; want %g, %q", got, err, tc.want, tc.err)
			}
		})
	}
	if s := Prometheus(nil, "http://me:secret@prom:9090", "q").String(); strings.Contains(s, "secret") {
		t.Errorf("source %q shows the URL's password", s)
	}
}

// nvmlSummary is what package gpu's sampler returns for two GPUs ticked at 0, 1 and
// 3 s (a fake NVML: the readings are the test's).
func nvmlSummary(counter bool) gpu.Summary {
	s := gpu.Summary{Start: t0, Interval: time.Second, Ticks: 3}
	for i, watts := range []uint32{100_000, 50_000} {
		d := gpu.DeviceSummary{Device: gpu.Device{Index: i}, HasPower: true, EnergySource: gpu.EnergyPowerIntegral}
		if counter {
			d.EnergySource = gpu.EnergyCounter
		}
		for k, at := range []time.Duration{0, time.Second, 3 * time.Second} {
			p := gpu.Point{At: at, PowerMilliW: watts}
			if counter {
				// A counter that disagrees with the power readings, so the test tells
				// which one the trace used.
				p.EnergyMilliJ = 1_000_000 + uint64(k)*uint64(k+1)*1000
			}
			d.Series = append(d.Series, p)
		}
		s.Devices = append(s.Devices, d)
	}
	return s
}

func TestFromGPU(t *testing.T) {
	for _, tc := range []struct {
		name   string
		s      gpu.Summary
		method string
		joules float64 // over the whole window
		note   string
	}{
		{"energy counter", nvmlSummary(true), MethodCounter, 2 * 6, ""},
		{"power integrated", nvmlSummary(false), MethodIntegral, 150 * 3, ""},
		{"no NVML", gpu.Summary{Note: gpu.NoteLibraryNotFound}, "", 0, gpu.NoteLibraryNotFound},
		{"no power", func() gpu.Summary {
			s := nvmlSummary(false)
			s.Devices[1].HasPower = false
			return s
		}(), "", 0, "neither an energy counter nor power"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := FromGPU(tc.s)
			if tc.note != "" {
				if !strings.Contains(tr.Note, tc.note) {
					t.Errorf("note %q, want %q", tr.Note, tc.note)
				}
				return
			}
			j, ok := tr.Energy(sec(0), sec(3))
			if tr.Method != tc.method || !ok || math.Abs(j-tc.joules) > 1e-9 || tr.Note != "" {
				t.Errorf("method %q, energy %g %v, want %q %g (note %q)", tr.Method, j, ok, tc.method, tc.joules, tr.Note)
			}
			if !strings.HasPrefix(tr.Source, "nvml GPU 0+GPU 1") {
				t.Errorf("source %q", tr.Source)
			}
		})
	}
}
