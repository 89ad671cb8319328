package power

import (
	"fmt"
	"time"

	"github.com/planrun/planrun/telemetry/gpu"
)

// FromGPU is the trace of the GPUs' energy over a sampler's window (package gpu reads
// NVML every tick): the sum of their total-energy counters where every GPU has one
// (Volta and later), otherwise their power readings integrated. The trace's Note says
// why there is none: no NVML, or no GPU that reports power.
func FromGPU(s gpu.Summary) Trace {
	t := Trace{Interval: s.Interval}
	if s.Note != "" {
		return Unavailable("nvml", s.Note)
	}
	if len(s.Devices) == 0 || s.Ticks == 0 {
		return Unavailable("nvml", "the GPU sampler took no reading")
	}
	counter, power := readable(s)
	what := fmt.Sprintf("nvml %s", gpuNames(s.Devices))
	switch {
	case counter:
		t.Source, t.Method, t.Points = what+" total energy", MethodCounter, counterPoints(s)
	case power:
		t.Source, t.Method, t.Points = what+" power", MethodIntegral, integratedPoints(s)
	default:
		return Unavailable(what, "NVML reports neither an energy counter nor power for every GPU")
	}
	return t
}

// readable reports whether every GPU kept its total-energy counter at every tick, and
// whether every GPU reported power at every tick.
func readable(s gpu.Summary) (counter, power bool) {
	counter, power = true, true
	for _, d := range s.Devices {
		counter = counter && d.EnergySource == gpu.EnergyCounter && len(d.Series) == s.Ticks
		power = power && d.HasPower && len(d.Series) == s.Ticks
		for _, p := range d.Series {
			counter = counter && p.EnergyMilliJ > 0
		}
	}
	return counter, power
}

// counterPoints are the GPUs' summed energy counters since the first tick.
func counterPoints(s gpu.Summary) []Point {
	var out []Point
	for k := 0; k < s.Ticks; k++ {
		var mj int64
		for _, d := range s.Devices {
			mj += int64(d.Series[k].EnergyMilliJ - d.Series[0].EnergyMilliJ)
		}
		out = append(out, Point{At: s.Start.Add(s.Devices[0].Series[k].At), Joules: float64(mj) / 1000})
	}
	return out
}

// integratedPoints are the GPUs' summed power readings integrated by the trapezoid rule.
func integratedPoints(s gpu.Summary) []Point {
	var out []Point
	var j, lastW float64
	var last time.Duration
	for k := 0; k < s.Ticks; k++ {
		var w float64
		for _, d := range s.Devices {
			w += float64(d.Series[k].PowerMilliW) / 1000
		}
		at := s.Devices[0].Series[k].At
		if k > 0 {
			j += (at - last).Seconds() * (w + lastW) / 2
		}
		out = append(out, Point{At: s.Start.Add(at), Joules: j})
		last, lastW = at, w
	}
	return out
}

func gpuNames(devs []gpu.DeviceSummary) string {
	s := ""
	for i, d := range devs {
		if i > 0 {
			s += "+"
		}
		s += fmt.Sprintf("GPU %d", d.Index)
	}
	return s
}
