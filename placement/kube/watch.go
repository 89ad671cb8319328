//go:build !nokube

package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/planrun/planrun/placement"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The states a job's rows and the manifest keep, in Kubernetes' spirit and Slurm's case.
const (
	statePending  = "PENDING"
	stateRunning  = "RUNNING"
	stateComplete = "COMPLETE"
	stateFailed   = "FAILED"
	stateDeleted  = "DELETED"
)

// waitingForever are container waiting reasons that never resolve by themselves: the
// cells fail at once, without waiting for the start timeout.
var waitingForever = []string{"ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError"}

// drainTimeout is how long the pod's log may take to reach its end after the Job ended.
const drainTimeout = 30 * time.Second

// jobRun follows one Job: its state and its pod's log, until both have ended; then it
// deletes the Job and its ConfigMap.
type jobRun struct {
	c    *cluster
	spec JobSpec
	id   string
	poll time.Duration
	rcv  *receiver
	log  *os.File

	ctx    context.Context // ends when the job is cancelled
	stop   context.CancelFunc
	ended  chan struct{} // closed once the final status is set and the objects deleted
	mu     sync.Mutex
	st     placement.Status
	start  chan struct{} // closed when the start frame arrives
	onceSt sync.Once
	// logs is closed when the log reader returns: the log of a terminated container
	// read to its end, or the job cancelled.
	logs chan struct{}
	// agents is what was last seen wrong with each agent index's pod (1..N-1 of a job of
	// several agents): waiting, terminated with an error, deleted. It outlives the pod.
	agents map[int]string
	// agentLogs are the agent pods whose logs were saved into the job's directory.
	agentLogs map[string]bool
	seen      map[int]bool // the indices a pod was seen of
}

func newJobRun(c *cluster, spec JobSpec, id string, poll time.Duration) *jobRun {
	ctx, stop := context.WithCancel(context.Background())
	return &jobRun{c: c, spec: spec, id: id, poll: poll, ctx: ctx, stop: stop, ended: make(chan struct{}),
		start: make(chan struct{}), logs: make(chan struct{}), agents: map[int]string{}, agentLogs: map[string]bool{}, seen: map[int]bool{},
		st: placement.Status{ID: id, Phase: placement.Pending, State: statePending}}
}

func (r *jobRun) status() placement.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

func (r *jobRun) set(st placement.Status) {
	r.mu.Lock()
	r.st = st
	r.mu.Unlock()
}

// follow reads the Job and its pod every poll until the Job ends, the start timeout
// passes with the pod not started, or the job is cancelled; it reads the pod's log
// meanwhile, and at the end sets the final status and deletes the Job's objects.
func (r *jobRun) follow() {
	defer close(r.ended)
	logFile, err := os.OpenFile(filepath.Join(r.spec.Dir, "pod.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		r.finish(placement.Status{ID: r.id, Phase: placement.Failed, State: stateFailed, Why: err.Error()})
		return
	}
	r.log = logFile
	defer logFile.Close()
	r.rcv = newReceiver(r.spec.Dir, logFile)
	defer r.rcv.close()
	final, streaming := r.watch()
	// The log reader stops with the job's context; the files close after it has.
	r.stop()
	if streaming {
		<-r.logs
	}
	r.finish(final)
}

// watch polls the Job and its pod until the job has ended (and its log been read) or
// must fail; it reports whether it started reading the pod's log.
func (r *jobRun) watch() (final placement.Status, streaming bool) {
	limit := r.spec.Settings.StartTimeout
	submitted := time.Now()
	var endedAt time.Time
	logs := r.logs // nil once read to the end, so the poll waits again
	logsDone := false
	for {
		job, err := r.c.api.jobs(r.c.namespace).Get(r.ctx, r.spec.ObjectName, metav1.GetOptions{})
		switch {
		case r.ctx.Err() != nil:
			return placement.Status{ID: r.id, Phase: placement.Failed, State: stateDeleted, Why: "deleted by planrun (cancelled)"}, streaming
		case apierrors.IsNotFound(err):
			return placement.Status{ID: r.id, Phase: placement.Failed, State: stateDeleted, Why: "the Job was deleted by someone else"}, streaming
		case err != nil:
			r.sleep(logs)
			continue
		}
		pods := r.pods()
		pod := pods[0]
		st := r.observe(job, pods)
		if pod != nil && !streaming && started(pod) {
			streaming = true
			go r.readLogs(pod.Name)
		}
		// An agent's pod that cannot start fails the job as index 0's would.
		idx, why, forever := r.waiting(pods)
		if st.Phase == placement.Pending && st.Why == "" {
			st.Why = why
		}
		switch {
		case st.Phase.Ended():
			if endedAt.IsZero() {
				endedAt = time.Now()
			}
			if !streaming || logsDone {
				return st, streaming
			}
			if time.Since(endedAt) > drainTimeout {
				st.Why = strings.TrimPrefix(st.Why+"; the pod's log did not reach its end within "+drainTimeout.String(), "; ")
				return st, streaming
			}
		case why != "" && forever:
			st.Phase, st.State, st.Why = placement.Failed, stateFailed, "pod cannot start: "+why
			st.Why += r.agentNotes(idx)
			return st, streaming
		case why != "" && time.Since(submitted) > limit:
			st.Phase, st.State = placement.Failed, stateFailed
			st.Why = fmt.Sprintf("pod not started within %s (start_timeout): %s", limit, why)
			st.Why += r.agentNotes(idx)
			return st, streaming
		}
		r.set(st)
		if r.sleep(logs) {
			logs, logsDone = nil, true
		}
	}
}

// finish saves the agent pods' logs that are left, deletes the Job's objects, then
// publishes the final status.
func (r *jobRun) finish(st placement.Status) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if r.spec.Agents > 1 {
		if list, err := r.c.api.pods(r.c.namespace).List(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + r.spec.ObjectName}); err == nil {
			for _, p := range list.Items {
				if i, err := strconv.Atoi(p.Labels[batchv1.JobCompletionIndexAnnotation]); err == nil && i > 0 && (started(&p) || terminated(&p) != nil) {
					r.saveAgentLog(i, p.Name)
				}
			}
		}
	}
	if err := deleteObjects(ctx, r.c, r.spec.ObjectName, r.spec.Agents > 1); err != nil {
		st.Why = strings.TrimPrefix(st.Why+fmt.Sprintf("; deleting Job %s: %v", r.id, err), "; ")
	}
	last := r.status()
	if st.Pod == "" {
		st.Pod, st.Node = last.Pod, last.Node
	}
	r.set(st)
}

// sleep waits a poll, or less when the job is cancelled or its log read to the end
// (which it reports).
func (r *jobRun) sleep(logs <-chan struct{}) bool {
	select {
	case <-r.ctx.Done():
	case <-logs:
		return true
	case <-time.After(r.poll):
	}
	return false
}

// pods are the Job's pods by index (the newest of each); index 0's runs the cells. The
// agent indices' pods, which a job of several agents has, are looked at as they go (look),
// and the log of one that ended is saved.
func (r *jobRun) pods() map[int]*corev1.Pod {
	list, err := r.c.api.pods(r.c.namespace).List(r.ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + r.spec.ObjectName})
	out := map[int]*corev1.Pod{}
	if err != nil {
		return out
	}
	slices.SortFunc(list.Items, func(a, b corev1.Pod) int { return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
	for i := range list.Items {
		p := &list.Items[i]
		idx, err := strconv.Atoi(p.Labels[batchv1.JobCompletionIndexAnnotation])
		if err != nil {
			idx, err = strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
		}
		if err != nil {
			idx = 0
		}
		if out[idx] == nil {
			out[idx] = p
		}
	}
	for _, i := range r.look(out) {
		r.saveAgentLog(i, out[i].Name)
	}
	return out
}

// look notes what the pods show: each index seen, and what is wrong with an agent
// index's pod (agents), which outlives the pod. It returns the agent indices whose pods
// have ended.
func (r *jobRun) look(pods map[int]*corev1.Pod) (ended []int) {
	for i, p := range pods {
		r.seen[i] = true
		if i == 0 || i >= r.spec.Agents {
			continue
		}
		if note := agentPodState(p); note != "" {
			r.agents[i] = note
		}
		if terminated(p) != nil {
			ended = append(ended, i)
		}
	}
	return ended
}

// waiting is the first index whose pod waits to start for a reason Kubernetes gives (not
// scheduled, its image not pulled), why, and whether it waits for ever; -1 and "" when
// none does. In a job of one agent it is that pod's reason as podWaiting says it.
func (r *jobRun) waiting(pods map[int]*corev1.Pod) (int, string, bool) {
	for i := range max(r.spec.Agents, 1) {
		p := pods[i]
		if p == nil && !r.seen[i] {
			if r.spec.Agents > 1 {
				return i, agentName(i) + ": the Job has made no pod for it yet", false
			}
			return i, "the Job has made no pod yet", false
		}
		if p == nil || started(p) || terminated(p) != nil {
			continue
		}
		if _, why := podWaiting(p); why != "" {
			if r.spec.Agents > 1 {
				why = agentName(i) + ": " + why
			}
			return i, why, waitingPermanently(p)
		}
	}
	return -1, "", false
}

// agentName names index i of a job of several agents.
func agentName(i int) string {
	if i == 0 {
		return "index 0 (the lead, agent 0)"
	}
	return fmt.Sprintf("index %d (agent %d)", i, i)
}

// agentPodState says what is wrong with an agent index's pod, in Kubernetes' words:
// deleted, terminated with an error, or waiting for a reason; "" while it is well.
func agentPodState(p *corev1.Pod) string {
	var parts []string
	if p.DeletionTimestamp != nil {
		parts = append(parts, "deleted at "+p.DeletionTimestamp.UTC().Format(time.RFC3339))
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.DisruptionTarget && cond.Status == corev1.ConditionTrue {
			parts = append(parts, fmt.Sprintf("%s %s: %s", cond.Type, cond.Reason, cond.Message))
		}
	}
	if t := terminated(p); t != nil && t.ExitCode != 0 {
		parts = append(parts, describeTermination(t))
	} else if _, why := podWaiting(p); why != "" && !started(p) {
		return why
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("pod %s on %s %s", p.Name, p.Spec.NodeName, strings.Join(parts, ", "))
}

// agentNotes is what was seen wrong with the agent indices' pods other than skip, for a
// failed job's reason ("" for none), with their saved logs.
func (r *jobRun) agentNotes(skip int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for i := 1; i < r.spec.Agents; i++ {
		note, ok := r.agents[i]
		if !ok || i == skip {
			continue
		}
		if r.agentLogs[agentLogName(i)] {
			note += " (its log: " + filepath.Join(r.spec.Dir, agentLogName(i)) + ")"
		}
		out = append(out, agentName(i)+": "+note)
	}
	if len(out) == 0 {
		return ""
	}
	return "; " + strings.Join(out, "; ")
}

func agentLogName(i int) string { return fmt.Sprintf("agent-%d.log", i) }

// saveAgentLog writes the log of agent index i's pod into the job's directory, once.
func (r *jobRun) saveAgentLog(i int, pod string) {
	r.mu.Lock()
	done := r.agentLogs[agentLogName(i)]
	r.mu.Unlock()
	if done {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := r.c.api.podLog(r.c.namespace, pod, false).DoRaw(ctx)
	if err != nil || os.WriteFile(filepath.Join(r.spec.Dir, agentLogName(i)), b, 0o644) != nil {
		return
	}
	r.mu.Lock()
	r.agentLogs[agentLogName(i)] = true
	r.mu.Unlock()
}

// started reports whether the pod's container has started (it has a log to read).
func started(pod *corev1.Pod) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running != nil || cs.State.Terminated != nil {
			return true
		}
	}
	return false
}

func waitingPermanently(pod *corev1.Pod) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && slices.Contains(waitingForever, w.Reason) {
			return true
		}
	}
	return false
}

// observe is the job's status from the Job and its pods: pending with why it waits
// (unschedulable, an image not pulled), running, or ended with what Kubernetes said.
// Index 0's pod is the job's: it runs the cells. In a job of several agents the Job ends
// only once every index has, so the job has ended once index 0's pod has: its exit code
// says how, and what was seen wrong with the agents' pods is added to a failure.
func (r *jobRun) observe(job *batchv1.Job, pods map[int]*corev1.Pod) placement.Status {
	pod := pods[0]
	st := placement.Status{ID: r.id, Phase: placement.Pending, State: statePending}
	if pod != nil {
		st.Pod, st.Node = pod.Name, pod.Spec.NodeName
		st.Reason, st.Why = podWaiting(pod)
		if started(pod) {
			st.Phase, st.State, st.Reason, st.Why = placement.Running, stateRunning, "", ""
		}
		if cs := terminated(pod); cs != nil {
			st.ExitCode = fmt.Sprint(cs.ExitCode)
		}
	}
	for _, cond := range job.Status.Conditions {
		if cond.Status != corev1.ConditionTrue {
			continue
		}
		switch cond.Type {
		case batchv1.JobComplete:
			st.Phase, st.State, st.Why = placement.Completed, stateComplete, ""
		case batchv1.JobFailed:
			st.Phase, st.State = placement.Failed, stateFailed
			st.Why = failure(cond, pod)
		}
	}
	if r.spec.Agents <= 1 {
		return st
	}
	if t := terminated(pod); t != nil {
		st.Phase, st.State, st.Why = placement.Completed, stateComplete, ""
		if t.ExitCode != 0 {
			st.Phase, st.State = placement.Failed, stateFailed
			st.Why = fmt.Sprintf("%s: pod %s: %s", agentName(0), pod.Name, describeTermination(t))
		}
	}
	if st.Phase == placement.Failed {
		st.Why += r.agentNotes(-1)
	}
	return st
}

// podWaiting says why a pod that has not started waits, in Kubernetes' words: the
// scheduler's message, or the container's waiting reason and message.
func podWaiting(pod *corev1.Pod) (reason, why string) {
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason != "" {
			return cond.Reason, fmt.Sprintf("pod %s %s: %s", pod.Name, cond.Reason, cond.Message)
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
			return w.Reason, fmt.Sprintf("pod %s on %s: container %s %s: %s", pod.Name, pod.Spec.NodeName, cs.Name, w.Reason, w.Message)
		}
	}
	return "", ""
}

// terminated is the pod's planrun container's termination, nil for no pod or one still running.
func terminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	if pod == nil {
		return nil
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == container && cs.State.Terminated != nil {
			return cs.State.Terminated
		}
	}
	return nil
}

// failure says why a Job failed: its condition's reason and message, the container's
// termination (OOMKilled, the exit code and planrun's meaning of it).
func failure(cond batchv1.JobCondition, pod *corev1.Pod) string {
	why := fmt.Sprintf("Job %s: %s", cond.Reason, cond.Message)
	if t := terminated(pod); t != nil {
		why += "; " + describeTermination(t)
	}
	return why
}

// describeTermination is the planrun container's end in Kubernetes' words and planrun's
// meaning of its exit code: "container planrun terminated OOMKilled with exit code 137 (…)".
func describeTermination(t *corev1.ContainerStateTerminated) string {
	why := fmt.Sprintf("container %s terminated %s with exit code %d (%s)", container, t.Reason, t.ExitCode, ExitClass(t.ExitCode))
	if t.Message != "" {
		why += ": " + strings.TrimSpace(t.Message)
	}
	return why
}

// readLogs follows the pod's log into the job's directory until it has read the log of
// a terminated container to its end; a stream broken before that is opened again and
// read from the start (frames are positional, and lines already written are skipped).
func (r *jobRun) readLogs(pod string) {
	defer close(r.logs)
	seen := 0
	last := "" // the last error written to the log file, not repeated every poll
	for r.ctx.Err() == nil {
		req := r.c.api.podLog(r.c.namespace, pod, true)
		stream, err := req.Stream(r.ctx)
		if err == nil {
			r.rcv.skip = seen
			err = r.rcv.read(stream, func() { r.onceSt.Do(func() { close(r.start) }) })
			stream.Close()
			seen = max(seen, r.rcv.lines)
		}
		if err != nil && err.Error() != last && r.ctx.Err() == nil {
			last = err.Error()
			fmt.Fprintf(r.log, "planrun: reading the pod's log through the API server: %v\n", err)
		}
		p, gerr := r.c.api.pods(r.c.namespace).Get(r.ctx, pod, metav1.GetOptions{})
		if apierrors.IsNotFound(gerr) || gerr == nil && terminated(p) != nil && err == nil {
			return
		}
		select {
		case <-r.ctx.Done():
		case <-time.After(r.poll):
		}
	}
}

// waitStarted returns once the start frame has arrived or the job has ended; it fails
// when the pod has run timeout without the frame.
func (r *jobRun) waitStarted(ctx context.Context, timeout time.Duration) error {
	var runningSince time.Time
	for {
		st := r.status()
		select {
		case <-r.start:
			return nil
		case <-r.ended:
			return nil
		default:
		}
		if st.Phase == placement.Running && runningSince.IsZero() {
			runningSince = time.Now()
		}
		if !runningSince.IsZero() && time.Since(runningSince) > timeout {
			return fmt.Errorf("kubernetes job %s of hardware %q: pod %s has run %s without planrun's start line in its log: does image %q run a planrun agent (planrun image builds one)? (see %s)",
				r.id, r.spec.Hardware, st.Pod, timeout, r.spec.Settings.Image, filepath.Join(r.spec.Dir, "pod.log"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.ended:
			return nil
		case <-r.start:
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// cancel deletes the Job and its ConfigMap and waits until the follower has seen them
// go.
func (r *jobRun) cancel(ctx context.Context) error {
	r.stop()
	select {
	case <-r.ended:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kubernetes job %s: still there after deleting it: %w", r.id, ctx.Err())
	}
}
