//go:build !nokube

package kube

import (
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/placement"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pod is index i's pod of job "job" on node-a, in the container state given.
func pod(i int, state corev1.ContainerState, conds ...corev1.PodCondition) *corev1.Pod {
	name := map[int]string{0: "job-0-aaaaa", 1: "job-1-bbbbb", 2: "job-2-ccccc"}[i]
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: "node-a"},
		Status: corev1.PodStatus{Conditions: conds, ContainerStatuses: []corev1.ContainerStatus{{Name: container, State: state}}}}
}

var (
	running    = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	neverPull  = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: `image "x" is not present`}}
	unschedule = corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/1 nodes are available: 1 Insufficient cpu."}
)

func exited(code int32) corev1.ContainerState {
	reason := "Error"
	if code == 0 {
		reason = "Completed"
	}
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason}}
}

func testRun(agents int) *jobRun {
	return newJobRun(nil, JobSpec{Agents: agents, Dir: "/run/kubernetes/job", Settings: nil}, "ns/job", time.Second)
}

// An agent index whose pod cannot start is the job's reason to wait, named by its
// index; one that never will (its image) is said so; a job of one pod speaks of it
// alone, as before.
func TestWaitingNamesTheIndex(t *testing.T) {
	r := testRun(3)
	pods := map[int]*corev1.Pod{0: pod(0, running), 1: pod(1, corev1.ContainerState{}, unschedule), 2: pod(2, running)}
	i, why, forever := r.waiting(pods)
	if i != 1 || forever || why != "index 1 (agent 1): pod job-1-bbbbb Unschedulable: 0/1 nodes are available: 1 Insufficient cpu." {
		t.Errorf("waiting: %d %q %v", i, why, forever)
	}
	pods[1] = pod(1, neverPull)
	if i, why, forever = r.waiting(pods); i != 1 || !forever || !strings.Contains(why, "index 1 (agent 1): pod job-1-bbbbb on node-a: container planrun ErrImageNeverPull") {
		t.Errorf("waiting: %d %q %v", i, why, forever)
	}
	delete(pods, 2)
	pods[1] = pod(1, running)
	if i, why, _ = r.waiting(pods); i != 2 || why != "index 2 (agent 2): the Job has made no pod for it yet" {
		t.Errorf("waiting: %d %q", i, why)
	}
	pods[2] = pod(2, running)
	r.look(pods) // index 2 is seen, then goes: not waiting, gone
	delete(pods, 2)
	if i, why, _ = r.waiting(pods); i != -1 || why != "" {
		t.Errorf("waiting: %d %q", i, why)
	}

	one := testRun(1)
	if _, why, _ := one.waiting(map[int]*corev1.Pod{}); why != "the Job has made no pod yet" {
		t.Errorf("one pod: %q", why)
	}
	if _, why, _ := one.waiting(map[int]*corev1.Pod{0: pod(0, corev1.ContainerState{}, unschedule)}); why != "pod job-0-aaaaa Unschedulable: 0/1 nodes are available: 1 Insufficient cpu." {
		t.Errorf("one pod: %q", why)
	}
}

// In a job of several agents the job has ended once index 0's pod has: complete at exit
// 0, else failed with its exit code, and with what was seen wrong with the agents' pods
// (a pod deleted mid-run, its container's end), which outlives the pod.
func TestIndexZeroEndsTheJob(t *testing.T) {
	r := testRun(3)
	job := &batchv1.Job{}
	if st := r.observe(job, map[int]*corev1.Pod{0: pod(0, running), 1: pod(1, running)}); st.Phase != placement.Running || st.Pod != "job-0-aaaaa" {
		t.Errorf("running: %+v", st)
	}
	deleted := pod(1, exited(130))
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	deleted.DeletionTimestamp = &at
	r.look(map[int]*corev1.Pod{0: pod(0, running), 1: deleted, 2: pod(2, exited(0))})
	st := r.observe(job, map[int]*corev1.Pod{0: pod(0, exited(4)), 2: pod(2, exited(0))}) // index 1's pod is gone by now
	want := "index 0 (the lead, agent 0): pod job-0-aaaaa: container planrun terminated Error with exit code 4 (a cell failed); " +
		"index 1 (agent 1): pod job-1-bbbbb on node-a deleted at 2026-01-02T03:04:05Z, container planrun terminated Error with exit code 130 (interrupted)"
	if st.Phase != placement.Failed || st.State != stateFailed || st.ExitCode != "4" || st.Why != want {
		t.Errorf("failed: %+v\nwant why %q", st, want)
	}
	if st := testRun(2).observe(job, map[int]*corev1.Pod{0: pod(0, exited(0)), 1: pod(1, running)}); st.Phase != placement.Completed || st.Why != "" {
		t.Errorf("index 0 done: %+v", st)
	}
	// A job of one pod waits for the Job's own condition.
	if st := testRun(1).observe(job, map[int]*corev1.Pod{0: pod(0, exited(4))}); st.Phase != placement.Running {
		t.Errorf("one pod, no condition yet: %+v", st)
	}
}
