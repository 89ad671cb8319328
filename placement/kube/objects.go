//go:build !nokube

package kube

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/planrun/planrun/load/fleet"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The objects of a job, built in small named pieces as k6-operator builds a test's
// (NewRunnerJob, NewRunnerService): the metadata every object shares, the ConfigMap of
// the pod's inputs, the container, the pod, the Secret and Service of a job of several
// agents, and the Job with its failure policy.

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
// name the lead.
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
	meta := objectMeta(spec)
	n := int32(max(spec.Agents, 1))
	cm, items := newConfigMap(spec, meta)
	c := newContainer(spec)
	pod := newPodSpec(spec, items)
	objs := Objects{ConfigMap: cm}
	action := batchv1.PodFailurePolicyActionFailJob
	if n > 1 {
		// A failed agent fails its index alone, so index 0 can still record the cell.
		action = batchv1.PodFailurePolicyActionFailIndex
		objs.Secret, objs.Service = newAgentsSecret(meta), newAgentsService(spec, meta)
		pod.Subdomain = spec.ObjectName
		c.Args = append([]string{"agent", "-lead", "--"}, c.Args...)
		c.Env = agentsEnv(spec, n)
	}
	pod.Containers = []corev1.Container{c}
	objs.Job = newJob(spec, meta, pod, n, action)
	return objs
}

// objectMeta is what every object of the job has: its name, planrun's labels (the run,
// the hardware, the job, the cell of a job of one) with the block's own, and the run's
// id and the job's cells in full as annotations.
func objectMeta(spec JobSpec) metav1.ObjectMeta {
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
	return metav1.ObjectMeta{Name: spec.ObjectName, Namespace: s.Namespace, Labels: labels, Annotations: annotations}
}

// newConfigMap holds the pod's input files under keys a ConfigMap takes, and the items
// that mount each key at its path under inputDir.
func newConfigMap(spec JobSpec, meta metav1.ObjectMeta) (*corev1.ConfigMap, []corev1.KeyToPath) {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta,
		Data: map[string]string{}, BinaryData: map[string][]byte{}}
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range spec.Files {
			if !yield(p) {
				return
			}
		}
	})
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
	return cm, items
}

// newContainer runs planrun's apply on the job's cells, from the mounted plan, with the
// block's image, resources and Secrets as environment.
func newContainer(spec JobSpec) corev1.Container {
	s := spec.Settings
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
	return c
}

// newPodSpec is the pod without its container: run once, no API access (its results
// leave through its log), the inputs from the ConfigMap, the run directory and /tmp
// empty, and the block's placement (node selector, tolerations, host network).
func newPodSpec(spec JobSpec, items []corev1.KeyToPath) corev1.PodSpec {
	s := spec.Settings
	pod := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, HostNetwork: s.HostNetwork, ServiceAccountName: s.ServiceAccount,
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
	return pod
}

// newAgentsSecret holds the agents' token, which apply fills as it creates the Secret.
func newAgentsSecret(meta metav1.ObjectMeta) *corev1.Secret {
	return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: meta, Type: corev1.SecretTypeOpaque}
}

// newAgentsService is the headless Service that names the job's pods, so that the agents
// dial index 0 by name.
func newAgentsService(spec JobSpec, meta metav1.ObjectMeta) *corev1.Service {
	port := int32(LeadPort(spec.ObjectName))
	return &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{batchv1.JobNameLabel: spec.ObjectName},
			// The DNS names exist from the moment the pods have addresses: the agents
			// dial index 0 before anything could call it ready.
			PublishNotReadyAddresses: true,
			Ports:                    []corev1.ServicePort{{Name: "lead", Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port)}},
		}}
}

// agentsEnv tells every pod of a job of n agents where index 0 listens and is reached,
// how many agents there are, how long to wait, and the token (from the Secret).
func agentsEnv(spec JobSpec, n int32) []corev1.EnvVar {
	port := LeadPort(spec.ObjectName)
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	return []corev1.EnvVar{
		{Name: envPodIP, ValueFrom: field("status.podIP")},
		{Name: envPodNamespace, ValueFrom: field("metadata.namespace")},
		{Name: fleet.EnvPod, ValueFrom: field("metadata.name")},
		{Name: fleet.EnvNode, ValueFrom: field("spec.nodeName")},
		{Name: fleet.EnvCount, Value: strconv.Itoa(int(n))},
		{Name: fleet.EnvLead, Value: fmt.Sprintf("%s-0.%s.$(%s).svc:%d", spec.ObjectName, spec.ObjectName, envPodNamespace, port)},
		{Name: fleet.EnvListen, Value: fmt.Sprintf("$(%s):%d", envPodIP, port)},
		{Name: fleet.EnvWait, Value: AgentWait.String()},
		{Name: fleet.EnvToken, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: spec.ObjectName}, Key: TokenKey}}},
	}
}

// newJob is the Indexed Job of n completions, all at once, that runs pod once: no retry
// (of the Job, or of an index), and the failure policy that ends it on any exit but 0.
func newJob(spec JobSpec, meta metav1.ObjectMeta, pod corev1.PodSpec, n int32, action batchv1.PodFailurePolicyAction) *batchv1.Job {
	js := batchv1.JobSpec{
		CompletionMode: new(batchv1.IndexedCompletion), Completions: new(n), Parallelism: new(n),
		PodFailurePolicy:        &batchv1.PodFailurePolicy{Rules: failureRules(action)},
		TTLSecondsAfterFinished: new(int32(spec.Settings.TTL.Seconds())),
		Template:                corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels, Annotations: meta.Annotations}, Spec: pod},
	}
	if n > 1 {
		// No retry of an index either; backoffLimit is left to its default (unbounded
		// with a per-index limit), since 0 would fail the whole Job at the first failed
		// index, before index 0 could record why.
		js.BackoffLimitPerIndex = new(int32(0))
	} else {
		js.BackoffLimit = new(int32(0))
	}
	return &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta, Spec: js}
}

// failureRules take action on each of planrun's exit codes, on any other exit (a crash,
// a kill) and on an eviction: a rerun would measure the cell a second time.
func failureRules(action batchv1.PodFailurePolicyAction) []batchv1.PodFailurePolicyRule {
	var rules []batchv1.PodFailurePolicyRule
	for _, e := range exitClasses {
		rules = append(rules, batchv1.PodFailurePolicyRule{Action: action,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: new(container),
				Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{e.code}}})
	}
	return append(rules,
		batchv1.PodFailurePolicyRule{Action: action,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: new(container),
				Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{0}}},
		batchv1.PodFailurePolicyRule{Action: action,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}})
}
