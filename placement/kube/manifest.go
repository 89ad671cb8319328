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
	"time"
	"unicode/utf8"

	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/placement/containerimage"
	"github.com/planrun/planrun/plan"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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

// Objects are what apply creates for one job: its ConfigMap, its Job, and for a cell
// of several load agents the Job's headless Service (its pods' names) and Secret (the
// agents' token). Secret and Service are nil for a job of one agent.
type Objects struct {
	ConfigMap *corev1.ConfigMap
	Secret    *corev1.Secret
	Service   *corev1.Service
	Job       *batchv1.Job
}

// All are the objects in the order apply creates them (the Job last: its pods need the
// others).
func (o Objects) All() []any {
	all := []any{o.ConfigMap}
	if o.Secret != nil {
		all = append(all, o.Secret, o.Service)
	}
	return append(all, o.Job)
}

// The pod's own address and namespace, from the downward API, for the variables that
// name the coordinator.
const (
	envPodIP        = "PLANRUN_POD_IP"
	envPodNamespace = "PLANRUN_POD_NAMESPACE"
)

// AgentWait is how long a Job's agents (indices 1..N-1) keep dialing index 0, which
// starts the cell's servers and calibrates its prompts before it listens.
const AgentWait = time.Hour

// NewObjects returns the job's objects. The Job is Indexed with one index per load agent
// (Kubernetes gives each pod its index in JOB_COMPLETION_INDEX), runs its pods once, and is
// deleted ttlSecondsAfterFinished after it ends when the coordinator could not delete it.
//
// A job of one agent: its pod runs the cell's apply; backoffLimit 0, and a pod failure
// policy whose rules name planrun's exit codes fails the Job at once on any of them.
//
// A job of N agents (a cell whose workload has agents = N): N completions, all running
// at once. Every pod runs `planrun agent -lead -- apply ...`: index 0 runs the cell's apply,
// which coordinates the agents and runs agent 0 itself; indices 1..N-1 are agents 1..N-1
// and dial index 0 as <job>-0.<service>.<namespace>.svc (an Indexed Job's pods are named
// <job>-<index> in the Service their subdomain names) at the Job's port, presenting the
// token of the job's Secret (apply fills it when it creates the Secret). A failed index
// fails itself alone (backoffLimitPerIndex 0, the rules' action FailIndex), so that index 0
// can record its cell's row, naming the agent, before its pod ends; apply ends the Job when
// index 0's pod has.
func NewObjects(spec JobSpec) Objects {
	s := spec.Settings
	labels := map[string]string{
		"app.kubernetes.io/name":       "planrun",
		"app.kubernetes.io/managed-by": "planrun",
		LabelRun:                       LabelValue(spec.RunID),
		LabelHardware:                  LabelValue(spec.Hardware),
		LabelJob:                       LabelValue(spec.Name),
	}
	if len(spec.CellIDs) == 1 {
		labels[LabelCell] = LabelValue(spec.CellIDs[0])
	}
	for k, v := range s.Labels {
		labels[k] = v
	}
	annotations := map[string]string{AnnotationRun: spec.RunID, AnnotationCells: strings.Join(spec.CellIDs, ",")}
	for k, v := range s.Annotations {
		annotations[k] = v
	}
	meta := metav1.ObjectMeta{Name: spec.ObjectName, Namespace: s.Namespace, Labels: labels, Annotations: annotations}
	n := int32(max(spec.Agents, 1))

	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta,
		Data: map[string]string{}, BinaryData: map[string][]byte{}}
	paths := make([]string, 0, len(spec.Files))
	for p := range spec.Files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var items []corev1.KeyToPath
	for i, p := range paths {
		key := fmt.Sprintf("f%d-%s", i, strings.Trim(notKeyChars.ReplaceAllString(filepath.Base(p), "-"), "-"))
		if data := spec.Files[p]; utf8.Valid(data) {
			cm.Data[key] = string(data)
		} else {
			cm.BinaryData[key] = data
		}
		items = append(items, corev1.KeyToPath{Key: key, Path: p})
	}

	args := []string{"apply", "-quiet", "-run-dir", runDir, "-stream"}
	for _, id := range spec.CellIDs {
		args = append(args, "-only", id)
	}
	args = append(args, "-var-file", inputDir+"/"+varsFile, spec.PlanArg)

	c := corev1.Container{
		Name: container, Image: s.Image, ImagePullPolicy: corev1.PullPolicy(s.PullPolicy),
		Command: []string{agentPath}, Args: args, WorkingDir: runDir,
		VolumeMounts: []corev1.VolumeMount{
			{Name: "input", MountPath: inputDir, ReadOnly: true},
			{Name: "run", MountPath: runDir},
			{Name: "tmp", MountPath: "/tmp"},
		},
		Resources: corev1.ResourceRequirements{Requests: quantities(s.Requests), Limits: quantities(s.Limits)},
	}
	for _, secret := range s.EnvFromSecrets {
		c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret}}})
	}
	pod := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, HostNetwork: s.HostNetwork, ServiceAccountName: s.ServiceAccount,
		// The agent needs no API access: its results leave through its log.
		AutomountServiceAccountToken: new(false),
		NodeSelector:                 s.NodeSelector,
		Volumes: []corev1.Volume{
			{Name: "input", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: spec.ObjectName}, Items: items}}},
			{Name: "run", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
	}
	if s.HostNetwork {
		pod.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	for _, t := range s.Tolerations {
		pod.Tolerations = append(pod.Tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator),
			Value: t.Value, Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.Seconds})
	}

	action := batchv1.PodFailurePolicyActionFailJob
	var secret *corev1.Secret
	var service *corev1.Service
	if n > 1 {
		action = batchv1.PodFailurePolicyActionFailIndex
		port := CoordinatorPort(spec.ObjectName)
		secret = &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: meta, Type: corev1.SecretTypeOpaque}
		service = &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta,
			Spec: corev1.ServiceSpec{
				ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{batchv1.JobNameLabel: spec.ObjectName},
				// The DNS names exist from the moment the pods have addresses: the agents
				// dial index 0 before anything could call it ready.
				PublishNotReadyAddresses: true,
				Ports:                    []corev1.ServicePort{{Name: "coordinator", Protocol: corev1.ProtocolTCP, Port: int32(port), TargetPort: intstr.FromInt32(int32(port))}},
			}}
		pod.Subdomain = spec.ObjectName
		c.Args = append([]string{"agent", "-lead", "--"}, c.Args...)
		field := func(path string) *corev1.EnvVarSource {
			return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
		}
		c.Env = []corev1.EnvVar{
			{Name: envPodIP, ValueFrom: field("status.podIP")},
			{Name: envPodNamespace, ValueFrom: field("metadata.namespace")},
			{Name: fleet.EnvPod, ValueFrom: field("metadata.name")},
			{Name: fleet.EnvNode, ValueFrom: field("spec.nodeName")},
			{Name: fleet.EnvCount, Value: strconv.Itoa(int(n))},
			{Name: fleet.EnvCoordinator, Value: fmt.Sprintf("%s-0.%s.$(%s).svc:%d", spec.ObjectName, spec.ObjectName, envPodNamespace, port)},
			{Name: fleet.EnvListen, Value: fmt.Sprintf("$(%s):%d", envPodIP, port)},
			{Name: fleet.EnvWait, Value: AgentWait.String()},
			{Name: fleet.EnvToken, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: spec.ObjectName}, Key: TokenKey}}},
		}
	}
	pod.Containers = []corev1.Container{c}

	var rules []batchv1.PodFailurePolicyRule
	for _, e := range exitClasses {
		rules = append(rules, batchv1.PodFailurePolicyRule{Action: action,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: new(container),
				Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{e.code}}})
	}
	// Any other exit (a crash, a kill) fails the job (its index) too, and so does an
	// eviction: a rerun would measure the cell a second time.
	rules = append(rules,
		batchv1.PodFailurePolicyRule{Action: action,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: new(container),
				Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{0}}},
		batchv1.PodFailurePolicyRule{Action: action,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}})
	js := batchv1.JobSpec{
		CompletionMode: new(batchv1.IndexedCompletion), Completions: new(n), Parallelism: new(n),
		PodFailurePolicy:        &batchv1.PodFailurePolicy{Rules: rules},
		TTLSecondsAfterFinished: new(int32(s.TTL.Seconds())),
		Template:                corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations}, Spec: pod},
	}
	if n > 1 {
		// No retry of an index either; backoffLimit is left to its default (unbounded
		// with a per-index limit), since 0 would fail the whole Job at the first failed
		// index, before index 0 could record why.
		js.BackoffLimitPerIndex = new(int32(0))
	} else {
		js.BackoffLimit = new(int32(0))
	}
	job := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta, Spec: js}
	return Objects{ConfigMap: cm, Secret: secret, Service: service, Job: job}
}

// CoordinatorPort is the port index 0 of a job of several agents listens on: one of
// 20000-29999 (below Linux's ephemeral ports), derived from the job's object name, so
// that the coordinators of two jobs whose pods share a node's network (host_network)
// rarely meet on one port; one that does finds it taken and fails its cell, saying so.
func CoordinatorPort(objectName string) int {
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
