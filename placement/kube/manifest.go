//go:build !nokube

package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/planrun/planrun/placement/containerimage"
	"github.com/planrun/planrun/plan"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Where the pod finds its inputs and writes its run directory.
const (
	inputDir  = "/planrun/input"
	runDir    = "/planrun/run"
	agentPath = containerimage.BinaryPath
	// container is the agent container's name, which the pod failure policy names.
	container = "planrun"
	varsFile  = "variables.hcl"
	// maxConfigMap is what the API server stores in one ConfigMap (1 MiB), less room for
	// the object's metadata.
	maxConfigMap = 1<<20 - 16<<10
)

// The labels planrun puts on every object it creates; LabelRun selects a run's objects.
const (
	LabelRun      = "planrun.dev/run"
	LabelHardware = "planrun.dev/hardware"
	LabelCell     = "planrun.dev/cell"
	LabelJob      = "planrun.dev/job"
	// AnnotationCells lists the job's cell ids in full (a label value cannot hold one).
	AnnotationCells = "planrun.dev/cells"
	// AnnotationRun is the run's id in full.
	AnnotationRun = "planrun.dev/run-id"
)

// JobSpec is one Kubernetes Job: some cells of one hardware block.
type JobSpec struct {
	// Name is the job's name within the plan: "<hardware>-<n>" for the n-th cell of a
	// per_cell block (the default), the hardware block's name for per_hardware.
	Name     string
	Hardware string
	Settings *Settings
	CellIDs  []string
	// RunID is the coordinator's run; Dir the job's directory in its run directory.
	RunID, Dir string
	// ObjectName names the Job and its ConfigMap (and Secret and Service, for a cell of
	// several agents): planrun-<job name>-<run hash>.
	ObjectName string
	// Agents is how many load agents the job's cell has, each an index of the Job.
	Agents int
	// Files are the ConfigMap's files by their path under inputDir.
	Files map[string][]byte
	// PlanArg is the plan as the pod opens it.
	PlanArg string
}

// NewJobs groups the Kubernetes-placed cells into Jobs, in plan order: one per cell, or
// one per hardware block where its kubernetes block says jobs = "per_hardware". Each
// job's directory is <runDir>/kubernetes/<job name>. The plan's files, the files it read
// and its resolved variables go with every job; a file outside the plan's directory, or
// more than a ConfigMap holds, is an error naming it.
func NewJobs(p *plan.Plan, cells []*plan.Cell, runID, runDirPath string) ([]JobSpec, error) {
	var jobs []JobSpec
	byHardware := map[string]int{}
	perCell := map[string]int{}
	for _, c := range cells {
		h := c.Hardware
		k := settingsOf(h)
		if k == nil {
			continue
		}
		if i, ok := byHardware[h.Name]; ok {
			// plan refuses a cell of several agents in a shared Job (checkAgentCells).
			jobs[i].CellIDs = append(jobs[i].CellIDs, c.ID)
			jobs[i].Agents = max(jobs[i].Agents, agents(c))
			continue
		}
		name := h.Name
		if k.Jobs == JobsPerCell {
			perCell[h.Name]++
			name = fmt.Sprintf("%s-%d", h.Name, perCell[h.Name])
		} else {
			byHardware[h.Name] = len(jobs)
		}
		jobs = append(jobs, JobSpec{Name: name, Hardware: h.Name, Settings: k, CellIDs: []string{c.ID},
			RunID: runID, Dir: filepath.Join(runDirPath, "kubernetes", name), ObjectName: objectName(name, runID), Agents: agents(c)})
	}
	for i := range jobs {
		files, planArg, err := inputs(p, cells, jobs[i].CellIDs)
		if err != nil {
			return nil, fmt.Errorf("hardware %q: %w", jobs[i].Hardware, err)
		}
		jobs[i].Files, jobs[i].PlanArg = files, planArg
	}
	return jobs, nil
}

// settingsOf is a hardware block's kubernetes settings, nil when it has no kubernetes
// block.
func settingsOf(h *plan.Hardware) *Settings {
	if h == nil || h.Batch == nil {
		return nil
	}
	k, _ := h.Batch.Settings.(*Settings)
	return k
}

// agents is how many load agents the cell's workload has.
func agents(c *plan.Cell) int {
	if c.Workload == nil {
		return 1
	}
	return max(c.Workload.Agents, 1)
}

// inputs are the files a job's pod needs to load the plan as the coordinator did: the
// plan's own, those it read while loading, the datasets of the job's cells, and the
// variables' resolved values as a -var-file (sensitive ones left out: they reach the pod
// from a Secret, as PLANRUN_VAR_<name>).
func inputs(p *plan.Plan, cells []*plan.Cell, ids []string) (map[string][]byte, string, error) {
	files := map[string][]byte{}
	dir, err := filepath.Abs(p.Dir)
	if err != nil {
		return nil, "", err
	}
	add := func(path string, data []byte) error {
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("the plan reads %s, outside its directory %s: a Kubernetes pod gets only the plan's directory (put the file there)", path, dir)
		}
		if data == nil {
			if data, err = os.ReadFile(abs); err != nil {
				return err
			}
		}
		files["plan/"+filepath.ToSlash(rel)] = data
		return nil
	}
	for name, f := range p.Files {
		if err := add(name, f.Bytes); err != nil {
			return nil, "", err
		}
	}
	for _, path := range p.ReadFiles {
		if err := add(path, nil); err != nil {
			return nil, "", err
		}
	}
	for _, c := range cells {
		if slices.Contains(ids, c.ID) && c.Workload != nil && c.Workload.Dataset != nil {
			if err := add(c.Workload.Dataset.Spec.Path, nil); err != nil {
				return nil, "", err
			}
		}
	}
	_, vars := plan.ValuesFile(p.Variables, "# The plan's variables as the submitting planrun resolved them.", "(sensitive)")
	files[varsFile] = vars
	size := 0
	for k, v := range files {
		size += len(k) + len(v)
	}
	if size > maxConfigMap {
		return nil, "", fmt.Errorf("the plan's files come to %d bytes, more than a ConfigMap holds (1 MiB): a dataset this large belongs in the image or a volume", size)
	}
	planArg := inputDir + "/plan"
	if info, err := os.Stat(p.Path); err == nil && !info.IsDir() {
		planArg += "/" + filepath.Base(p.Path)
	}
	return files, planArg, nil
}

var notLabelChars = regexp.MustCompile(`[^a-z0-9-]+`)

// objectName is a DNS-1123 label for the job's objects, unique to the run:
// planrun-<job name>-<8 hex of the run id>.
func objectName(job, runID string) string {
	h := sha256.Sum256([]byte(runID))
	name := strings.Trim(notLabelChars.ReplaceAllString(strings.ToLower(job), "-"), "-")
	// 63 less "planrun-", "-" and the hash; an Indexed Job's pod names add "-<index>-<5>".
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-")
	}
	return "planrun-" + name + "-" + hex.EncodeToString(h[:4])
}

// LabelValue makes s a label value: characters a label value cannot hold become ".",
// the ends are trimmed to a letter or digit, and a value still too long becomes its
// start and a hash ("" stays "", which a label value may be).
func LabelValue(s string) string {
	v := strings.Map(func(r rune) rune {
		if r < 128 && (r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '.'
	}, s)
	v = strings.Trim(v, "-_.")
	if len(v) > 63 {
		h := sha256.Sum256([]byte(s))
		v = strings.Trim(v[:50], "-_.") + "-" + hex.EncodeToString(h[:6])
	}
	return v
}

// exitClasses are planrun apply's exit codes (cmd/planrun's exitCodes) and what each
// says about a job's cells, in the order of the pod failure policy's rules.
var exitClasses = []struct {
	code  int32
	class string
}{
	{1, "invalid plan in the pod, or its run directory could not be written"},
	{2, "bad command line"},
	{3, "an expect block failed"},
	{4, "a cell failed"},
	{130, "interrupted"},
}

// ExitClass says what planrun's exit code means, as a failed row names it.
func ExitClass(code int32) string {
	for _, e := range exitClasses {
		if e.code == code {
			return e.class
		}
	}
	switch {
	case code == 137:
		return "killed (SIGKILL: out of memory, or the pod was deleted)"
	case code > 128:
		return "killed by signal " + strconv.Itoa(int(code-128))
	}
	return "planrun crashed"
}

// LeadPort is the port index 0 of a job of several agents listens on: one of
// 20000-29999 (below Linux's ephemeral ports), derived from the job's object name, so
// that the leads of two jobs whose pods share a node's network (host_network)
// rarely meet on one port; one that does finds it taken and fails its cell, saying so.
func LeadPort(objectName string) int {
	h := fnv.New32a()
	h.Write([]byte(objectName))
	return 20000 + int(h.Sum32()%10000)
}

var notKeyChars = regexp.MustCompile(`[^-._a-zA-Z0-9]+`)

func quantities(m map[string]string) corev1.ResourceList {
	if len(m) == 0 {
		return nil
	}
	l := corev1.ResourceList{}
	for k, v := range m {
		l[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return l
}
