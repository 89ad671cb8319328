package plan

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// The agents block's lead: its older name, coordinator, still loads with a warning
// that says to rename it, at the argument's line; both at once, or an address that is
// none, is an error.
func TestAgentsLeadAndItsOlderName(t *testing.T) {
	const src = `backend "openai" "gw" {
  url = "http://gateway.lab:8000/v1"
}
hardware "clients" {
  agents {
    hosts = ["client-a", "client-b"]
    ARGS
  }
}
workload "fleet" {
  agents      = 2
  concurrency = [2]
}
matrix "m" {
  model    = ["x"]
  tool     = [backend.openai.gw]
  hardware = [hardware.clients]
  workload = [workload.fleet]
}
`
	for _, c := range []struct {
		args     string
		lead     string
		severity hcl.DiagnosticSeverity // of the one diagnostic wanted; 0: none
		summary  string
	}{
		{args: `lead = "10.0.0.5"`, lead: "10.0.0.5"},
		{args: `coordinator = "10.0.0.5"`, lead: "10.0.0.5", severity: hcl.DiagWarning, summary: "Deprecated argument"},
		{args: "lead = \"10.0.0.5\"\n    coordinator = \"10.0.0.6\"", severity: hcl.DiagError, summary: "Conflicting arguments"},
		{args: `lead = "not a host"`, severity: hcl.DiagError, summary: "Invalid lead"},
		{args: `coordinator = ""`, severity: hcl.DiagError, summary: "Invalid coordinator"},
	} {
		p, diags := LoadFiles(t.TempDir(), map[string][]byte{"p.hcl": []byte(strings.Replace(src, "ARGS", c.args, 1))}, LoadOptions{Getenv: noEnv})
		var got hcl.Diagnostics
		for _, d := range diags {
			if d.Summary == "Deprecated argument" && c.severity != hcl.DiagWarning {
				continue // beside the error wanted: coordinator = "" is also the older name
			}
			got = append(got, d)
		}
		if c.severity == 0 {
			if len(diags) > 0 {
				t.Errorf("%s: diagnostics %v, want none", c.args, diags)
			} else if h := p.Hardware[0]; h.Agents == nil || h.Agents.Lead != c.lead || h.Agents.LeadAt().Start.Line != 7 {
				t.Errorf("%s: agents %+v, want lead %s at line 7", c.args, h.Agents, c.lead)
			}
			continue
		}
		if len(got) != 1 || got[0].Severity != c.severity || got[0].Summary != c.summary || got[0].Subject == nil ||
			got[0].Subject.Filename != "p.hcl" || got[0].Subject.Start.Line < 7 {
			t.Errorf("%s: diagnostics %v, want one %q on p.hcl line 7 or 8", c.args, diags, c.summary)
			continue
		}
		if c.severity == hcl.DiagWarning {
			if h := p.Hardware[0]; h.Agents == nil || h.Agents.Lead != c.lead {
				t.Errorf("%s: agents %+v, want lead %s read from the older name", c.args, h.Agents, c.lead)
			}
		}
	}
}
