package ledger

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Environment is what the figures were measured on. The caller fills GPU, driver, CUDA
// (from the gpu package), server versions and model digests (from probes); CollectHost
// fills the host facts.
type Environment struct {
	Host   string `json:"host"`
	OS     string `json:"os"`
	Arch   string `json:"arch"`
	Kernel string `json:"kernel,omitempty"`
	CPU    string `json:"cpu,omitempty"`
	CPUs   int    `json:"cpus,omitempty"`

	GPUs   []string `json:"gpus,omitempty"` // e.g. "NVIDIA H200 (143 GB)"
	Driver string   `json:"driver,omitempty"`
	CUDA   string   `json:"cuda,omitempty"`

	// ServerVersions maps a tool ("ollama.local") to the version its server reported.
	ServerVersions map[string]string `json:"server_versions,omitempty"`
	// ServerBuilds maps a tool to what the engine of the server planrun started for it
	// said its build uses (the row's engine_build: the CPU extensions and GPU backends it
	// reports in its log).
	ServerBuilds map[string]string `json:"server_builds,omitempty"`
	// ModelDigests maps "tool model_id" to the model's digest: Ollama's (/api/tags), or,
	// for an OpenAI-protocol server on this machine that loaded a local checkpoint
	// directory, planrun's own digest of its config.json and weight files (package
	// weights).
	ModelDigests map[string]string `json:"model_digests,omitempty"`
	// ModelRoots maps "tool model_id" to the weights the server says it loaded (vLLM's
	// /v1/models root: a checkpoint path or a Hugging Face repository id).
	ModelRoots map[string]string `json:"model_roots,omitempty"`
	// Models maps "tool model_id" to what the server says about the model it served
	// (Ollama /api/show and /api/tags), so a row can be traced to the exact weights.
	Models map[string]ModelInfo `json:"models,omitempty"`

	PlanrunVersion string `json:"planrun_version"`
	PlanPath       string `json:"plan_path,omitempty"`
	PlanHash       string `json:"plan_hash,omitempty"`
}

// ModelInfo is a model as its server describes it.
type ModelInfo struct {
	Name              string `json:"name"`                         // as the server lists it, e.g. "tiny:latest"
	Digest            string `json:"digest,omitempty"`             // e.g. "sha256:…" (Ollama /api/tags)
	ParameterSize     string `json:"parameter_size,omitempty"`     // e.g. "7.6B"
	QuantizationLevel string `json:"quantization_level,omitempty"` // e.g. "Q4_K_M"
	Family            string `json:"family,omitempty"`
	Format            string `json:"format,omitempty"` // e.g. "gguf"
}

// String is the one-line form used in row notes and the report's environment list:
// "tiny:latest sha256:0123456789ab, 1.2M params, F16, llama".
func (m ModelInfo) String() string {
	s := m.Name
	if m.Digest != "" {
		d := m.Digest
		if !strings.Contains(d, ":") {
			d = "sha256:" + d
		}
		if len(d) > len("sha256:")+12 {
			d = d[:len("sha256:")+12]
		}
		s += " " + d
	}
	var parts []string
	if m.ParameterSize != "" {
		parts = append(parts, m.ParameterSize+" params")
	}
	for _, p := range []string{m.QuantizationLevel, m.Family} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) > 0 {
		s += ", " + strings.Join(parts, ", ")
	}
	return strings.TrimSpace(s)
}

// CollectHost returns the host facts of this machine: hostname, OS, arch, kernel, CPU
// model and count. Facts that cannot be read are left empty, never an error.
func CollectHost() Environment {
	e := Environment{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	e.Host, _ = os.Hostname()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		e.CPU = cpuModel(f)
		f.Close()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(b))
	}
	return e
}

// cpuModel reads the first "model name" of /proc/cpuinfo (x86), falling back to
// "Hardware"/"cpu model"/"Model" lines on other architectures.
func cpuModel(r io.Reader) string {
	var fallback string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			return strings.TrimSpace(v)
		case "Hardware", "cpu model", "Model":
			if fallback == "" {
				fallback = strings.TrimSpace(v)
			}
		}
	}
	return fallback
}

// CellStatus is one cell's outcome in the manifest.
type CellStatus struct {
	ID     string `json:"id"`
	Status string `json:"status"` // ok / failed / interrupted / skipped
	Notes  string `json:"notes,omitempty"`
	// Capacity is the answer of the cell's capacity search; nil when it had none.
	Capacity *Capacity `json:"capacity,omitempty"`
	// Settings are the cell's settings as the plan resolved them, by attribute name
	// ("max_tokens": "128", "backend.url": ...), so that history and compare can say
	// which of them changed between two runs of the cell.
	Settings map[string]string `json:"settings,omitempty"`
}

// AgentRun is one load agent of a cell whose workload has agents > 1, as the manifest
// records it: where it ran, and its clock against its lead's (the planrun that ran the
// cell), measured when it connected and again after each level (ClockEnd is the last),
// with the drift between.
type AgentRun struct {
	Cell  string `json:"cell"`
	Index int    `json:"index"`
	// Where is how it was started: "local", "ssh HOST", "srun task I", "kubernetes
	// index I".
	Where string `json:"where"`
	Host  string `json:"host"`
	// Node is its batch scheduler's name for its node (Slurm's, Kubernetes'), if any;
	// Pod its pod on Kubernetes.
	Node string `json:"node,omitempty"`
	Pod  string `json:"pod,omitempty"`
	PID  int    `json:"pid"`
	// SourceAddr is the address its connections to the server bound, if one was set.
	SourceAddr string     `json:"source_addr,omitempty"`
	ClockStart AgentClock `json:"clock_start"`
	ClockEnd   AgentClock `json:"clock_end"`
	// Drift is ClockEnd's offset less ClockStart's.
	Drift time.Duration `json:"drift_ns"`
}

// AgentClock is an agent's clock against its lead's: it reads Offset ahead,
// within ±Bound (half the least of RoundTrips round trips), as measured At (on the
// lead's clock).
type AgentClock struct {
	Offset     time.Duration `json:"offset_ns"`
	Bound      time.Duration `json:"bound_ns"`
	RoundTrips int           `json:"round_trips"`
	At         time.Time     `json:"at"`
}

// Manifest is manifest.json: what a result directory was produced by and from.
type Manifest struct {
	// RunID names the run; every row and raw sample of the run carries it.
	RunID string `json:"run_id,omitempty"`
	Environment
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	// ServerStartup maps a plan-managed server to its start-up time (start → ready).
	ServerStartup map[string]string `json:"server_startup,omitempty"`
	Cells         []CellStatus      `json:"cells"`
	// Warnings are problems with the run as a whole (declared hardware not found, ...).
	Warnings []string `json:"warnings,omitempty"`

	// PlanFiles are the plan's files as copied into the run directory (relative to it),
	// and Variables every variable's value as the run resolved it, sensitive ones
	// redacted: with them, the run can be repeated.
	PlanFiles []string          `json:"plan_files,omitempty"`
	Variables map[string]string `json:"variables,omitempty"`
	// Command is the command line that started the run, sensitive -var values redacted.
	Command []string `json:"command,omitempty"`
	// Servers are the plan-managed servers the run started, by name.
	Servers map[string]ServerRun `json:"servers,omitempty"`
	// Jobs are the batch jobs that ran the run's cells placed on a batch scheduler, of
	// every scheduler, in the order they were submitted.
	Jobs []BatchJob `json:"jobs,omitempty"`
	// Agents are the load agents of the cells whose workload has agents > 1, by cell
	// and index.
	Agents []AgentRun `json:"agents,omitempty"`
	// Datasets are the dataset files the run's workloads read, by dataset block name.
	Datasets map[string]DatasetRun `json:"datasets,omitempty"`
}

// DatasetRun identifies a dataset file as a run read it: with its SHA-256, a rerun can
// tell whether it sent the same prompts.
type DatasetRun struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	SHA256 string `json:"sha256"`
	// Rows counts the file's rows; Kept those that passed the length filters.
	Rows int `json:"rows"`
	Kept int `json:"kept"`
}

// ServerRun is how a plan-managed server was started, so it can be started again.
type ServerRun struct {
	Command []string `json:"command"`       // program and arguments, exactly as run
	Dir     string   `json:"dir,omitempty"` // working directory; empty means planrun's
	// EnvNames are the variables the plan set for it (their values are not copied: they
	// may hold keys).
	EnvNames []string `json:"env_names,omitempty"`
	// Setup are the commands run once it was ready (e.g. creating the model).
	Setup   [][]string `json:"setup,omitempty"`
	Version string     `json:"version,omitempty"` // as its backend's probe reported it
}

// BatchJob is one batch job of a run (a Slurm job, a Kubernetes Job), as the manifest
// records it.
type BatchJob struct {
	// Scheduler is the scheduler's name: "slurm", "kubernetes".
	Scheduler string `json:"scheduler"`
	Name      string `json:"name"` // the hardware block, or <hardware>-<n> per cell
	Hardware  string `json:"hardware"`
	// ID is the scheduler's: Slurm's job id, or a Kubernetes Job's namespace/name; empty
	// when the scheduler refused the job.
	ID       string   `json:"id,omitempty"`
	Node     string   `json:"node,omitempty"`
	Pod      string   `json:"pod,omitempty"` // the pod that ran a Kubernetes Job
	State    string   `json:"state"`
	ExitCode string   `json:"exit_code,omitempty"`
	Log      string   `json:"log,omitempty"`
	Dir      string   `json:"dir"` // its run directory: results.csv, manifest.json, requests.jsonl
	Cells    []string `json:"cells"`
	GPUs     []string `json:"gpus,omitempty"` // what NVML saw on the node
	Notes    string   `json:"notes,omitempty"`
}

// WriteManifest writes m to path atomically (temporary file, fsync, rename), so the
// manifest rewritten after each cell is never half a file.
func WriteManifest(path string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// ReadManifest reads a manifest.json (used by -resume and compare).
func ReadManifest(path string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, err
	}
	// Earlier manifests kept a list of jobs per scheduler.
	var earlier struct {
		Slurm      []BatchJob `json:"slurm_jobs"`
		Kubernetes []BatchJob `json:"kubernetes_jobs"`
	}
	if err := json.Unmarshal(b, &earlier); err != nil {
		return m, err
	}
	for _, j := range earlier.Slurm {
		j.Scheduler = "slurm"
		m.Jobs = append(m.Jobs, j)
	}
	for _, j := range earlier.Kubernetes {
		j.Scheduler = "kubernetes"
		m.Jobs = append(m.Jobs, j)
	}
	return m, nil
}
