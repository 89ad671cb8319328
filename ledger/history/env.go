package history

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/planrun/planrun/ledger"
)

// Env is what a row was measured in besides its figures: what changed when a figure
// moved. Fields a run did not record are empty.
type Env struct {
	PlanrunVersion string `json:"planrun_version,omitempty"`
	PlanHash       string `json:"plan_hash,omitempty"`
	Tool           string `json:"tool,omitempty"`
	ServerVersion  string `json:"server_version,omitempty"`
	// ServerBuild is what the engine said its build uses (the row's engine_build): a
	// rebuild with other CPU extensions moves every figure as much as a new version.
	ServerBuild string `json:"server_build,omitempty"`
	// ServerCommand is the command line of the plan-managed servers the run started.
	ServerCommand string `json:"server_command,omitempty"`
	ModelDigest   string `json:"model_digest,omitempty"`
	// ModelRoot is the weights the server says it loaded (vLLM's root: a path or a
	// Hugging Face repository id).
	ModelRoot string `json:"model_root,omitempty"`
	GPU       string `json:"gpu,omitempty"`
	Driver    string `json:"driver,omitempty"`
	CUDA      string `json:"cuda,omitempty"`
	Dataset   string `json:"dataset,omitempty"` // name=sha256 of each dataset the run read
	Host      string `json:"host,omitempty"`    // the node for a row a batch scheduler ran
	Command   string `json:"command,omitempty"` // planrun's own command line
	// Settings are the cell's settings as the run resolved them (the manifest's
	// cells[].settings: max_tokens, backend.url, ...); nil for a run that did not record
	// them (before planrun recorded them, or without its manifest).
	Settings map[string]string `json:"settings,omitempty"`
	// Variables are the run's variables as resolved (sensitive ones redacted).
	Variables map[string]string `json:"variables,omitempty"`
}

// EnvOf reads a row's environment from the row and its run's manifest (nil: the row's
// own columns only).
func EnvOf(row ledger.Row, m *ledger.Manifest) Env {
	e := Env{PlanrunVersion: row.Version, PlanHash: row.PlanHash, Tool: row.Tool, GPU: row.GPU, Host: row.Host,
		ServerBuild: row.EngineBuild}
	if row.Batch.Node != "" {
		// A batch scheduler's row: the node is the machine; Host is the job's own name
		// for it (a Kubernetes pod's name is new in every run).
		e.Host = row.Batch.Node
	}
	if m == nil {
		return e
	}
	e.ServerVersion = m.ServerVersions[row.Tool]
	e.ModelDigest = m.ModelDigests[row.Tool+" "+row.ModelID]
	e.ModelRoot = m.ModelRoots[row.Tool+" "+row.ModelID]
	if info, ok := m.Models[row.Tool+" "+row.ModelID]; ok && e.ModelDigest == "" {
		e.ModelDigest = info.Digest
	}
	if len(m.GPUs) > 0 {
		e.GPU = strings.Join(m.GPUs, ", ")
	}
	e.Driver, e.CUDA = m.Driver, m.CUDA
	var cmds, sets []string
	for _, name := range slices.Sorted(maps.Keys(m.Servers)) {
		cmds = append(cmds, strings.Join(m.Servers[name].Command, " "))
	}
	e.ServerCommand = strings.Join(cmds, "; ")
	for _, name := range slices.Sorted(maps.Keys(m.Datasets)) {
		sets = append(sets, name+"="+short(m.Datasets[name].SHA256))
	}
	e.Dataset = strings.Join(sets, ", ")
	e.Command = strings.Join(m.Command, " ")
	if e.Host == "" {
		e.Host = m.Host
	}
	e.Variables = m.Variables
	for _, c := range m.Cells {
		if c.ID == row.CellID {
			e.Settings = c.Settings
		}
	}
	return e
}

// short cuts a digest to 12 hex digits, as people quote them.
func short(d string) string {
	algo, hex, ok := strings.Cut(d, ":")
	if !ok {
		algo, hex = "", d
	}
	if len(hex) > 12 {
		hex = hex[:12]
	}
	if algo != "" {
		return algo + ":" + hex
	}
	return hex
}

// EnvChange is one environment field that differs between two rows.
type EnvChange struct {
	// Field is an EnvFields name, "setting.NAME" for one of the cell's settings, or
	// "var.NAME" for a variable.
	Field    string `json:"field"`
	From, To string
}

// settingPrefix marks the changes of the cell's own settings.
const settingPrefix = "setting."

// Setting is the name of the cell's setting the change is of ("max_tokens"), "" for
// other changes.
func (c EnvChange) Setting() string {
	name, _ := strings.CutPrefix(c.Field, settingPrefix)
	if name == c.Field {
		return ""
	}
	return name
}

func (c EnvChange) String() string {
	if name := c.Setting(); name != "" {
		return fmt.Sprintf("%s %s → %s", name, or(c.From), or(c.To))
	}
	switch c.Field {
	case "server_version":
		return fmt.Sprintf("server %s → %s", or(c.From), or(c.To))
	case "server_build":
		return fmt.Sprintf("engine build %s → %s", or(c.From), or(c.To))
	case "model_digest":
		return fmt.Sprintf("weights %s → %s", or(short(c.From)), or(short(c.To)))
	case "model_root":
		return fmt.Sprintf("weights path %s → %s", or(c.From), or(c.To))
	case "plan_hash":
		return fmt.Sprintf("plan hash %s → %s", or(short(c.From)), or(short(c.To)))
	}
	return fmt.Sprintf("%s %s → %s", c.Field, or(c.From), or(c.To))
}

func or(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// envField is one Env field by the name history's -key and the messages use.
type envField struct {
	name string
	get  func(*Env) string
}

var envFields = []envField{
	{"planrun_version", func(e *Env) string { return e.PlanrunVersion }},
	{"plan_hash", func(e *Env) string { return e.PlanHash }},
	{"server_version", func(e *Env) string { return e.ServerVersion }},
	{"server_build", func(e *Env) string { return e.ServerBuild }},
	{"server_command", func(e *Env) string { return e.ServerCommand }},
	{"model_digest", func(e *Env) string { return e.ModelDigest }},
	{"model_root", func(e *Env) string { return e.ModelRoot }},
	{"gpu", func(e *Env) string { return e.GPU }},
	{"driver", func(e *Env) string { return e.Driver }},
	{"cuda", func(e *Env) string { return e.CUDA }},
	{"dataset", func(e *Env) string { return e.Dataset }},
	{"host", func(e *Env) string { return e.Host }},
}

// EnvFields are the names of the environment fields, in the order messages list them.
func EnvFields() []string {
	names := make([]string, len(envFields))
	for i, f := range envFields {
		names[i] = f.name
	}
	return names
}

// Get reads the environment field of that name; ok is false for an unknown name.
func (e Env) Get(name string) (v string, ok bool) {
	for _, f := range envFields {
		if f.name == name {
			return f.get(&e), true
		}
	}
	return "", false
}

// Diff lists what changed from a to b: every environment field, then each of the
// cell's settings that differs, then each variable. A field one side did not record (an
// older run) is no change.
func Diff(a, b Env) []EnvChange {
	var out []EnvChange
	for _, f := range envFields {
		x, y := f.get(&a), f.get(&b)
		if x != y && x != "" && y != "" {
			out = append(out, EnvChange{f.name, x, y})
		}
	}
	out = append(out, diffMaps(settingPrefix, a.Settings, b.Settings)...)
	return append(out, diffMaps("var.", a.Variables, b.Variables)...)
}

// diffMaps lists the keys whose values differ, by name; nothing when one side is nil
// (not recorded).
func diffMaps(prefix string, a, b map[string]string) []EnvChange {
	if a == nil || b == nil {
		return nil
	}
	var names []string // only the keys that differ are sorted: a series diffs every point
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			names = append(names, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	out := make([]EnvChange, len(names))
	for i, k := range names {
		out[i] = EnvChange{prefix + k, a[k], b[k]}
	}
	return out
}

// Phrases says each change as a phrase, the cell's settings together in one:
// "plan hash sha256:… → sha256:…", "settings: max_tokens 128 → 256, seed 1 → 2". A
// variable's change is left to the settings it made when both runs recorded them. tool
// names the server in a version's change ("openai.vllm server 0.9.1 → 0.9.2"); ""
// leaves it out.
func Phrases(changes []EnvChange, tool string) []string {
	var parts, sets []string
	hasSettings := slices.ContainsFunc(changes, func(c EnvChange) bool { return c.Setting() != "" })
	for _, c := range changes {
		switch {
		case c.Setting() != "":
			sets = append(sets, c.String())
		case strings.HasPrefix(c.Field, "var.") && hasSettings:
		case (c.Field == "server_version" || c.Field == "server_build") && tool != "":
			parts = append(parts, tool+" "+c.String())
		default:
			parts = append(parts, c.String())
		}
	}
	if len(sets) > 0 {
		parts = append(parts, "settings: "+strings.Join(sets, ", "))
	}
	return parts
}

// Explain says in one phrase what changed from a to b, for a regression message:
// "openai.vllm server 0.9.1 → 0.9.2, same weights, settings: max_tokens 128 → 256";
// "same environment" when nothing recorded differs.
func Explain(a, b Env) string {
	changes := Diff(a, b)
	parts := Phrases(changes, b.Tool)
	if len(parts) == 0 {
		return "same environment"
	}
	weights := slices.ContainsFunc(changes, func(c EnvChange) bool { return c.Field == "model_digest" })
	if !weights && a.ModelDigest != "" && a.ModelDigest == b.ModelDigest {
		at := len(parts) // before the settings, which Phrases puts last
		if strings.HasPrefix(parts[at-1], "settings: ") {
			at--
		}
		parts = slices.Insert(parts, at, "same weights")
	}
	return strings.Join(parts, ", ")
}
