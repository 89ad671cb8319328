package apply

import (
	"github.com/planrun/planrun/apply/qualityphase"
	"github.com/planrun/planrun/apply/served"
	"github.com/planrun/planrun/load/traffic"
	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/gpu"
)

// applier runs cells on this machine: it starts the servers they need, builds and
// probes their backends, and measures their levels into the run record.
type applier struct {
	o   Options
	rec *runRecord
	tel *gpu.Telemetry
	// ownTel: the applier opened tel, and closes it.
	ownTel bool
	mgr    *servers.Manager
	known  backendSet
	served map[string]served.Quant // what each backend's model is served as (quant.go, package served)
	// traffic holds each workload's traffic, read before anything is sent (readTraffic).
	traffic map[*plan.Workload]*traffic.Workload
	// job is the batch job this node-side run is in; nil elsewhere.
	job placement.InJob
	// quality is the quality phases' references and figures (package qualityphase).
	quality *qualityphase.Phase
}

func (a *applier) close() {
	a.mgr.Close()
	if a.ownTel {
		a.tel.Close()
	}
}

func (a *applier) note(format string, args ...any) { a.rec.note(format, args...) }

// info is a note that all went as planned: left out with Options.Quiet.
func (a *applier) info(format string, args ...any) {
	if !a.o.Quiet {
		a.note(format, args...)
	}
}
