package plan

import (
	"fmt"
	"net"

	"github.com/hashicorp/hcl/v2"
)

// MaxAgents bounds a workload's agents: more processes than any client fleet needs,
// and few enough that a typo (agents = 4000) is caught before 4,000 processes start.
const MaxAgents = 256

// Agents is a hardware block's agents { ... } sub-block: where the load agents of its
// cells run when a workload has agents > 1. Without it they are processes on this
// machine; on a Slurm placement they are the tasks of the cell's job.
type Agents struct {
	// Hosts run one agent each, reached through SSH (agent i on Hosts[i]).
	Hosts []string
	// SSH is the command that reaches a host (default ssh -o BatchMode=yes).
	SSH []string
	// PlanrunPath is the planrun binary on the hosts (default: this one's path).
	PlanrunPath string
	// Lead is the address the agents dial this planrun, their lead, at (default: this
	// machine's host name for hosts and Slurm tasks, 127.0.0.1 for local agents).
	Lead string
	// SourceAddresses are the local addresses the agents' connections to the server
	// bind, agent i the i-th (127.0.0.2, 127.0.0.3, ... on one machine: each address
	// has its own ephemeral ports to the server).
	SourceAddresses []string
	DeclRange       hcl.Range
	hostsAt         hcl.Range
	leadAt          hcl.Range
}

var agentsSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "hosts"}, {Name: "ssh"}, {Name: "planrun_path"}, {Name: "lead"}, {Name: leadBefore}, {Name: "source_addresses"},
	},
}

// DefaultSSH is how an agents block's hosts are reached when it names no ssh: never a
// password prompt, which would hang the run.
var DefaultSSH = []string{"ssh", "-o", "BatchMode=yes"}

func (l *loader) decodeAgentsBlock(b *hcl.Block, ctx *hcl.EvalContext) *Agents {
	ag := &Agents{DeclRange: b.DefRange, SSH: DefaultSSH}
	content, diags := b.Body.Content(agentsSchema)
	l.add(diags)
	a := content.Attributes
	if h := a["hosts"]; h != nil && l.decode(h, ctx, &ag.Hosts) {
		ag.hostsAt = h.Expr.Range()
		if len(ag.Hosts) == 0 {
			l.errorf(h.Expr.Range().Ptr(), "Invalid hosts", "hosts lists the machines that run one load agent each; an empty list runs none. Drop it to run the agents on this machine.")
		}
		seen := map[string]bool{}
		for i, host := range ag.Hosts {
			switch why := hostProblem(host); {
			case host == "":
				l.errorf(elemRange(h.Expr, i), "Invalid host", "hosts[%d] is empty.", i)
			case why != "":
				l.errorf(elemRange(h.Expr, i), "Invalid host", "%s", why)
			case seen[host]:
				l.errorf(elemRange(h.Expr, i), "Duplicate host", "%q is listed twice: one agent a host.", host)
			}
			seen[host] = true
		}
	}
	if s := a["ssh"]; s != nil && l.decode(s, ctx, &ag.SSH) {
		if len(ag.SSH) == 0 {
			l.errorf(s.Expr.Range().Ptr(), "Invalid ssh", "ssh is the command that reaches a host, such as [\"ssh\", \"-o\", \"BatchMode=yes\"]; it cannot be empty.")
		} else {
			l.add(programWithSpaces("ssh", ag.SSH, s.Expr.Range().Ptr(), func(p string) string { return p }))
		}
	}
	l.decode(a["planrun_path"], ctx, &ag.PlanrunPath)
	if c := l.leadAttribute(a); c != nil && l.decode(c, ctx, &ag.Lead) {
		ag.leadAt = c.Expr.Range()
		if why := hostProblem(ag.Lead); why != "" || ag.Lead == "" {
			l.errorf(c.Expr.Range().Ptr(), "Invalid "+c.Name, "%s is the host name or address the agents dial this planrun (their lead) at, such as \"10.0.0.5\", not %q.", c.Name, ag.Lead)
		}
	}
	if s := a["source_addresses"]; s != nil && l.decode(s, ctx, &ag.SourceAddresses) {
		for i, addr := range ag.SourceAddresses {
			if net.ParseIP(addr) == nil {
				l.errorf(elemRange(s.Expr, i), "Invalid source address", "source_addresses lists IP addresses such as \"127.0.0.2\", not %q.", addr)
			}
		}
	}
	return ag
}

// decodeAgents reads a workload's agents: how many load agents share each of its
// levels (default 1, this process alone).
func (l *loader) decodeAgents(w *Workload, a *hcl.Attribute, ctx *hcl.EvalContext) {
	w.Agents = 1
	if a == nil {
		return
	}
	if !l.decode(a, ctx, &w.Agents) {
		return
	}
	w.agentsAt = a.Expr.Range()
	if w.Agents < 1 || w.Agents > MaxAgents {
		l.errorf(a.Expr.Range().Ptr(), "Invalid agents",
			"agents is how many load agents (planrun processes, on this machine or the hosts an agents block lists) share each level: 1 to %d, not %d.", MaxAgents, w.Agents)
		w.Agents = 1
	}
}

// checkAgents refuses a workload whose levels cannot be shared by its agents: a level
// whose slots (or cap on requests in flight) are fewer than the agents leaves an
// agent with none; a run of fewer requests, or sessions, than agents leaves one with
// nothing to send; a capacity search over concurrency would try levels below the
// agents.
func checkAgents(w *Workload) hcl.Diagnostics {
	var rep report
	n := w.Agents
	if n <= 1 {
		return rep.diags
	}
	at := w.agentsAt.Ptr()
	checkAgentSlots(w, &rep)
	switch {
	case w.Session != nil && w.Session.Sessions > 0 && w.Session.Sessions < n:
		rep.errorf(w.Session.sessionsAt.Ptr(), "Fewer sessions than agents",
			"sessions = %d per run over agents = %d (at %s): a session stays on one agent, so an agent would have none. Raise sessions, or lower agents.", w.Session.Sessions, n, w.agentsAt)
	case w.Session == nil && w.Requests > 0 && w.Requests < n:
		rep.errorf(at, "Fewer requests than agents", "requests = %d per run over agents = %d: an agent would send nothing. Raise requests, or lower agents.", w.Requests, n)
	}
	if c := w.Capacity; c != nil && !w.SearchesRate() && w.Replay == nil {
		rep.errorf(c.DeclRange.Ptr(), "Capacity search over concurrency with agents",
			"Workload %q's capacity search bisects the concurrency, down to levels below its agents = %d (at %s), which cannot be shared out. Search a request_rate, or set agents = 1.", w.Name, n, w.agentsAt)
	}
	return rep.diags
}

// checkAgentCells refuses a cell whose hardware's agents block lists hosts for another
// number of agents than its workload's (one agent a host).
func checkAgentCells(cells []*Cell) hcl.Diagnostics {
	var diags hcl.Diagnostics
	seen := map[[2]string]bool{}
	for _, c := range cells {
		h, w := c.Hardware, c.Workload
		if h == nil || h.Agents == nil || len(h.Agents.Hosts) == 0 || w.Agents <= 1 {
			continue
		}
		k := [2]string{h.Name, w.Name}
		if seen[k] || len(h.Agents.Hosts) == w.Agents {
			continue
		}
		seen[k] = true
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Agents and hosts differ",
			Detail: fmt.Sprintf("Workload %q has agents = %d (at %s), but hardware %q's agents block lists %d hosts, which run one agent each. Make them agree.",
				w.Name, w.Agents, w.agentsAt, h.Name, len(h.Agents.Hosts)),
			Subject: h.Agents.hostsAt.Ptr()})
	}
	return diags
}

// checkAgentSlots refuses a concurrency level below the workload's agents: an agent
// would have no slot (or no share of a paced level's cap).
func checkAgentSlots(w *Workload, rep *report) {
	n := w.Agents
	for i, c := range w.Concurrency {
		if c > 0 && c < n {
			what := "slots"
			if len(w.RequestRates) > 0 || w.Replay != nil {
				what = "requests in flight (its cap)"
			}
			rep.errorf(w.levelAt("concurrency", i), "Fewer slots than agents",
				"concurrency %d shares out %s over agents = %d (at %s): an agent would have none. List levels of at least %d, or lower agents.", c, what, n, w.agentsAt, n)
		}
	}
}

// HostsAt is where the block lists its hosts (its declaration when it does not).
func (a *Agents) HostsAt() hcl.Range { return orRange(a.hostsAt, a.DeclRange) }

// LeadAt is where the block gives the lead's address (its declaration when it does
// not).
func (a *Agents) LeadAt() hcl.Range { return orRange(a.leadAt, a.DeclRange) }

// AgentsAt is where the workload sets agents.
func (w *Workload) AgentsAt() hcl.Range { return w.agentsAt }

func orRange(r, or hcl.Range) hcl.Range {
	if r.Filename == "" {
		return or
	}
	return r
}

// leadBefore is the agents block's name for lead before "coordinator" came to mean the
// batch-job coordinator alone: still read, with a warning, so that older plans load.
const leadBefore = "coordinator"

// leadAttribute is the agents block's lead, or its older name with a warning that says
// to rename it; both at once is an error.
func (l *loader) leadAttribute(a hcl.Attributes) *hcl.Attribute {
	lead, old := a["lead"], a[leadBefore]
	switch {
	case old == nil:
		return lead
	case lead != nil:
		l.errorf(old.NameRange.Ptr(), "Conflicting arguments",
			"%s is the older name of lead (at %s): give lead alone.", leadBefore, lead.NameRange)
		return lead
	}
	l.add(hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Deprecated argument",
		Detail:  leadBefore + " is now called lead (the planrun the agents dial); rename it: " + leadBefore + " will stop being read.",
		Subject: old.NameRange.Ptr()}})
	return old
}
