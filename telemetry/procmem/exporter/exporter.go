// Package exporter reads a server's memory on the host it runs on, for a server on
// another machine, whose /proc planrun cannot read: a process exporter there serves the
// memory of named groups of processes over HTTP, and planrun scrapes it through each
// measured window, as it scrapes a DCGM exporter for a remote GPU.
//
// The metrics are those of ncabatoff/process-exporter, so a host that already runs it is
// read as is:
//
//	namedprocess_namegroup_num_procs{groupname="ollama"} 2
//	namedprocess_namegroup_memory_bytes{groupname="ollama",memtype="resident"} 1.3e+08
//	namedprocess_namegroup_memory_bytes{groupname="ollama",memtype="proportionalResident"} 1.1e+08
//
// Handler is planrun's own exporter (planrun process-exporter): a group is the processes
// whose command line matches a pattern, with their descendants, read through procmem.
package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/planrun/planrun/telemetry/procmem"
)

// The metric names and memtype labels, as ncabatoff/process-exporter writes them.
const (
	metricProcs     = "namedprocess_namegroup_num_procs"
	metricMemory    = "namedprocess_namegroup_memory_bytes"
	labelGroup      = "groupname"
	labelMemType    = "memtype"
	memResident     = "resident"
	memProportional = "proportionalResident"
)

// Source begins the origin of every figure read from an exporter, so tables can name it.
const Source = "process-exporter"

// DefaultListen is the address planrun process-exporter serves on: the port
// ncabatoff/process-exporter uses, so plans need not say which exporter runs.
const DefaultListen = ":9256"

// Group is a name and the processes it stands for: those whose command line Match
// matches, and their descendants (a server and the workers it forks).
type Group struct {
	Name  string
	Match *regexp.Regexp
}

// Read is the group's memory now, from /proc. This process is never counted, though its
// own command line holds the pattern.
func (g Group) Read() procmem.Reading {
	return procmem.Read(procmem.Matching(g.Match, os.Getpid()))
}

// Handler serves the groups' memory, read from /proc at each scrape (Group.Read).
func Handler(groups []Group) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		procs := &dto.MetricFamily{Name: ptr(metricProcs), Help: ptr("number of processes in this group"),
			Type: dto.MetricType_GAUGE.Enum()}
		mem := &dto.MetricFamily{Name: ptr(metricMemory), Help: ptr("number of bytes of memory in use"),
			Type: dto.MetricType_GAUGE.Enum()}
		for _, g := range groups {
			rd := g.Read()
			procs.Metric = append(procs.Metric, gauge(float64(rd.Processes), g.Name, ""))
			mem.Metric = append(mem.Metric, gauge(float64(rd.RSS), g.Name, memResident))
			if rd.HasPSS {
				mem.Metric = append(mem.Metric, gauge(float64(rd.PSS), g.Name, memProportional))
			}
		}
		w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
		for _, mf := range []*dto.MetricFamily{procs, mem} {
			if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
				return
			}
		}
	})
}

func gauge(v float64, group, memType string) *dto.Metric {
	labels := []*dto.LabelPair{{Name: ptr(labelGroup), Value: ptr(group)}}
	if memType != "" {
		labels = append(labels, &dto.LabelPair{Name: ptr(labelMemType), Value: ptr(memType)})
	}
	return &dto.Metric{Label: labels, Gauge: &dto.Gauge{Value: &v}}
}

func ptr[T any](v T) *T { return &v }

// Parse reads one scrape into a reading per group name. A scrape without the memory
// gauge is an error: it is not a process exporter.
func Parse(r io.Reader) (map[string]procmem.Reading, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("process exporter /metrics: %w", err)
	}
	if fams[metricMemory] == nil {
		return nil, fmt.Errorf("process exporter /metrics: no %s gauge (is this a process exporter?)", metricMemory)
	}
	groups := map[string]procmem.Reading{}
	pss := map[string]bool{}
	for _, m := range fams[metricMemory].GetMetric() {
		name, memType := label(m, labelGroup), label(m, labelMemType)
		g := groups[name]
		switch memType {
		case memResident:
			g.RSS = uint64(m.GetGauge().GetValue())
		case memProportional:
			g.PSS = uint64(m.GetGauge().GetValue())
			pss[name] = true
		}
		groups[name] = g
	}
	for _, m := range fams[metricProcs].GetMetric() {
		name := label(m, labelGroup)
		if g, ok := groups[name]; ok {
			g.Processes = int(m.GetGauge().GetValue())
			groups[name] = g
		}
	}
	for name, g := range groups {
		g.HasPSS = pss[name]
		groups[name] = g
	}
	return groups, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Select picks the group named group from a scrape, or the only group when group is "".
func Select(groups map[string]procmem.Reading, group string) (procmem.Reading, error) {
	names := slices.Sorted(maps.Keys(groups))
	if group == "" {
		if len(names) == 1 {
			group = names[0]
		} else {
			return procmem.Reading{}, fmt.Errorf("the exporter serves %d groups (%s): name one with process_group", len(names), strings.Join(names, ", "))
		}
	}
	g, ok := groups[group]
	switch {
	case !ok:
		return procmem.Reading{}, fmt.Errorf("the exporter serves no group %q (it serves %s)", group, strings.Join(names, ", "))
	case g.Processes == 0:
		return procmem.Reading{}, fmt.Errorf("group %q has no process on the host", group)
	}
	return g, nil
}

// scrapeTimeout bounds one scrape: an exporter reads every process's smaps_rollup, which
// takes a while on a busy host, but a window must not wait on one that hangs.
const scrapeTimeout = 2 * time.Second

// Reader is a procmem reading of group (the only one when "") from the exporter at url
// (its /metrics), a scrape per call.
func Reader(hc *http.Client, url, group string) func(context.Context) (procmem.Reading, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	return func(ctx context.Context) (procmem.Reading, error) {
		ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return procmem.Reading{}, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return procmem.Reading{}, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return procmem.Reading{}, errors.New("process exporter /metrics: " + resp.Status)
		}
		groups, err := Parse(resp.Body)
		if err != nil {
			return procmem.Reading{}, err
		}
		return Select(groups, group)
	}
}

// Origin names an exporter's figures: "process-exporter URL group NAME" (no group when
// the plan names none and the exporter serves one).
func Origin(url, group string) string {
	o := Source + " " + url
	if group != "" {
		o += " group " + group
	}
	return o
}
