package kube

import (
	"fmt"
	"net"
	"os"

	"github.com/hashicorp/hcl/v2"

	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/plan"
)

// Name is the scheduler's name: its block's type, its rows' batch_scheduler.
const Name = "kubernetes"

// TokenKey is the key of the agents' token in a job's Secret.
const TokenKey = "token"

// Kind is Kubernetes as apply registers it: the kubernetes { } block, the Scheduler that
// runs its cells as Indexed Jobs (without it in a build with -tags nokube: see
// newScheduler), and the Job a pod's apply runs in.
var Kind = placement.Kind{
	Block:   plan.PlacementKind{Name: Name, Scheduler: "Kubernetes", Jobs: "Kubernetes Jobs", Schemas: map[string]*hcl.BodySchema{"": blockSchema, "resources": resourcesSchema}, Decode: decode},
	New:     newScheduler,
	InJob:   inJob,
	Missing: Missing,
}

// indexedJob is the Indexed Job a pod's apply runs in.
type indexedJob struct{}

// inJob is the pod's Job when Kubernetes gave it an index; nil elsewhere.
func inJob(getenv func(string) string) placement.InJob {
	if getenv("JOB_COMPLETION_INDEX") == "" {
		return nil
	}
	return indexedJob{}
}

// Agents are the cell's Job's indices (NewObjects): agent 0 here, the others the pods
// Kubernetes started with this one. The Job's environment says where this lead
// listens (its pod's address and the Job's port), the name the other pods dial it by
// (the Job's headless Service) and the token they present (from the Job's Secret). The
// others have the kubernetes block's start_timeout (at least the fleet's usual minute)
// to dial in, since a pod may wait that long for its node.
func (indexedJob) Agents(a placement.AgentStart) (placement.Agents, error) {
	listen, lead, token := os.Getenv(fleet.EnvListen), os.Getenv(fleet.EnvLead), os.Getenv(fleet.EnvToken)
	if listen == "" || lead == "" || token == "" {
		return placement.Agents{}, fmt.Errorf("this pod of a Kubernetes Indexed Job lacks %s, %s or %s: its Job was not made by planrun apply for a cell of several agents",
			fleet.EnvListen, fleet.EnvLead, fleet.EnvToken)
	}
	host, _, err := net.SplitHostPort(lead)
	if err != nil {
		return placement.Agents{}, fmt.Errorf("%s=%q: %w", fleet.EnvLead, lead, err)
	}
	start := DefaultStartTimeout
	if h := a.Cell.Hardware; h != nil && h.Batch != nil {
		if k, ok := h.Batch.Settings.(*Settings); ok {
			start = k.StartTimeout
		}
	}
	o := fleet.Options{Listen: listen, Advertise: host, Token: token, Connect: max(start, fleet.ConnectTimeout)}
	return placement.Agents{Launcher: fleet.Scheduled{Command: a.Command, Self: listen, Name: "kubernetes index"}, Options: o,
		Where: "the pods of this Kubernetes Indexed Job, agent 0 in this one"}, nil
}
