//go:build !nokube

package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/plan"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Scheduler is apply's placement.Scheduler over Kubernetes Jobs, for the cells it was made
// with: it creates each job's ConfigMap and Job, follows the Job and its pod, writes the
// pod's frames into the job's directory, and deletes what it created.
type Scheduler struct {
	plan  *plan.Plan
	cells []*plan.Cell
	// Poll is how often a job's Job and pods are read (default 1s).
	Poll time.Duration

	mu       sync.Mutex
	clusters map[string]*cluster // by hardware block, once Check or Submit connected
	specs    map[string]JobSpec  // by job directory, as Jobs made them
	runs     map[string]*jobRun  // by the scheduler's id for a job: namespace/name
	runLabel string              // the run's label value, set by Jobs
	agents   bool                // a job of several agents was submitted: Secrets and Services to delete
}

// NewScheduler returns the scheduler of one apply: its plan and its selected cells
// (those not placed on Kubernetes are left alone).
func NewScheduler(p *plan.Plan, cells []*plan.Cell) *Scheduler {
	return &Scheduler{plan: p, cells: cells, Poll: time.Second, clusters: map[string]*cluster{},
		specs: map[string]JobSpec{}, runs: map[string]*jobRun{}}
}

// newScheduler is Kind's New.
func newScheduler(s placement.Setup) placement.Scheduler { return NewScheduler(s.Plan, s.Cells) }

// Name is "kubernetes".
func (s *Scheduler) Name() string { return Name }

func (s *Scheduler) settings(hardware string) *Settings {
	for _, c := range s.cells {
		if c.Hardware != nil && c.Hardware.Name == hardware {
			return settingsOf(c.Hardware)
		}
	}
	return nil
}

// cluster connects to the cluster of hardware's kubernetes block, once.
func (s *Scheduler) cluster(hardware string) (*cluster, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.clusters[hardware]; c != nil {
		return c, nil
	}
	k := s.settings(hardware)
	if k == nil {
		return nil, fmt.Errorf("hardware %q has no kubernetes block", hardware)
	}
	c, err := connect(hardware, k)
	if err != nil {
		return nil, err
	}
	s.clusters[hardware] = c
	return c, nil
}

// Check says, before anything is created, whether hardware's cells can run: its
// kubeconfig and context exist, and the API server answers.
func (s *Scheduler) Check(hardware string) error {
	c, err := s.cluster(hardware)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		done <- c.api.serverVersion(context.Background())
	}()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		err = errors.New("no answer in 20s")
	}
	if err != nil {
		return fmt.Errorf("hardware %q: the API server of context %q (%s) does not answer: %w", hardware, c.context, c.host, err)
	}
	return nil
}

// Jobs groups the cells with these ids as NewJobs does.
func (s *Scheduler) Jobs(cellIDs []string, runDirPath string) ([]placement.Job, error) {
	var cells []*plan.Cell
	for _, c := range s.cells {
		if slices.Contains(cellIDs, c.ID) {
			cells = append(cells, c)
		}
	}
	runID := filepath.Base(runDirPath)
	specs, err := NewJobs(s.plan, cells, runID, runDirPath)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runLabel = LabelValue(runID)
	jobs := make([]placement.Job, len(specs))
	for i, spec := range specs {
		s.specs[spec.Dir] = spec
		jobs[i] = placement.Job{Name: spec.Name, Hardware: spec.Hardware, CellIDs: spec.CellIDs, Dir: spec.Dir}
	}
	return jobs, nil
}

// Submit creates the job's objects (a leftover of an earlier attempt of the same run is
// deleted first): its ConfigMap, for a cell of several agents its Secret, holding a new
// random token, and its Service, then its Job, which then owns the others; and it starts
// following the Job. The id is namespace/name.
func (s *Scheduler) Submit(ctx context.Context, job placement.Job) (string, error) {
	s.mu.Lock()
	spec, ok := s.specs[job.Dir]
	s.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("kubernetes: job %s (%s) was not made by Jobs", job.Name, job.Dir)
	}
	c, err := s.cluster(job.Hardware)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(job.Dir, 0o755); err != nil {
		return "", fmt.Errorf("hardware %q: %w", job.Hardware, err)
	}
	objs := NewObjects(spec)
	cm, secret, svc, kj := objs.ConfigMap, objs.Secret, objs.Service, objs.Job
	id := c.namespace + "/" + spec.ObjectName
	withAgents := secret != nil
	if err := deleteObjects(ctx, c, spec.ObjectName, withAgents); err != nil {
		return "", fmt.Errorf("hardware %q: deleting an earlier attempt's %s: %w", job.Hardware, id, err)
	}
	if withAgents {
		s.mu.Lock()
		s.agents = true
		s.mu.Unlock()
	}
	fail := func(what string, err error) (string, error) {
		_ = deleteObjects(context.WithoutCancel(ctx), c, spec.ObjectName, withAgents)
		return "", fmt.Errorf("hardware %q: %s %s: %w", job.Hardware, what, id, err)
	}
	cm.Namespace, kj.Namespace = c.namespace, c.namespace
	if _, err := c.api.configMaps(c.namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return fail("creating ConfigMap", err)
	}
	if secret != nil {
		secret.Namespace, svc.Namespace = c.namespace, c.namespace
		secret.Data = map[string][]byte{TokenKey: []byte(fleet.NewToken())}
		if _, err := c.api.secrets(c.namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			return fail("creating Secret", err)
		}
		if _, err := c.api.services(c.namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			return fail("creating Service", err)
		}
	}
	created, err := c.api.jobs(c.namespace).Create(ctx, kj, metav1.CreateOptions{})
	if err != nil {
		return fail("creating Job", err)
	}
	// The others belong to the Job, so whatever deletes the Job (planrun, or its
	// ttlSecondsAfterFinished) deletes them too.
	owner := []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: created.Name, UID: created.UID}}
	cm.OwnerReferences = owner
	if _, err := c.api.configMaps(c.namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fail("owning by its Job ConfigMap", err)
	}
	if secret != nil {
		secret.OwnerReferences, svc.OwnerReferences = owner, owner
		if _, err := c.api.secrets(c.namespace).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
			return fail("owning by its Job Secret", err)
		}
		if _, err := c.api.services(c.namespace).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
			return fail("owning by its Job Service", err)
		}
	}
	r := newJobRun(c, spec, id, s.Poll)
	s.mu.Lock()
	s.runs[id] = r
	s.mu.Unlock()
	go r.follow()
	return id, nil
}

// newToken is a job's agent token: 16 random bytes, in hex.
func (s *Scheduler) run(id string) (*jobRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[id]
	if r == nil {
		return nil, fmt.Errorf("kubernetes: no job %s submitted by this run", id)
	}
	return r, nil
}

// State is the job as last seen: the Job's and its pod's state, ended only once the
// pod's log has been read to its end and the Job's objects deleted.
func (s *Scheduler) State(_ context.Context, id string) (placement.Status, error) {
	r, err := s.run(id)
	if err != nil {
		return placement.Status{ID: id}, err
	}
	return r.status(), nil
}

// Cancel deletes the Job (foreground: its pods first) and its ConfigMap, and returns
// once none of them is left (or ctx ends).
func (s *Scheduler) Cancel(ctx context.Context, id string) error {
	r, err := s.run(id)
	if err != nil {
		return err
	}
	return r.cancel(ctx)
}

// WaitShared returns once the pod's log has shown planrun's start frame (the coordinator
// receives what the agent writes), or the job ended (its state says why). It fails when
// the pod runs timeout without the frame: its image does not run a planrun agent.
func (s *Scheduler) WaitShared(ctx context.Context, job placement.Job, id string, timeout time.Duration) error {
	r, err := s.run(id)
	if err != nil {
		return err
	}
	return r.waitStarted(ctx, timeout)
}

// LogPath is the pod's own output (its log less planrun's frames), in the job's directory.
func (s *Scheduler) LogPath(job placement.Job, _ string) string {
	return filepath.Join(job.Dir, "pod.log")
}

// Close deletes every Job, ConfigMap, Secret and Service labelled with this run that is still there (a
// run cut short, a second Ctrl-C) and returns once none is left or ctx ends.
func (s *Scheduler) Close(ctx context.Context) error {
	s.mu.Lock()
	label, agents := s.runLabel, s.agents
	clusters := make([]*cluster, 0, len(s.clusters))
	for _, c := range s.clusters {
		clusters = append(clusters, c)
	}
	s.mu.Unlock()
	if label == "" {
		return nil
	}
	var errs []error
	for _, c := range clusters {
		errs = append(errs, deleteRun(ctx, c, label, agents))
	}
	return errors.Join(errs...)
}

var foreground = metav1.DeletePropagationForeground

// deleteObjects deletes the Job of that name (foreground: the Job goes once its pods
// have) and its ConfigMap, and with agents its Secret and Service, and waits until none
// of them nor any of the Job's pods is left. A job of one agent touches no Secret or
// Service: its user may not be allowed to.
func deleteObjects(ctx context.Context, c *cluster, name string, agents bool) error {
	ns := c.namespace
	jobs, cms, secrets, svcs := c.api.jobs(ns), c.api.configMaps(ns), c.api.secrets(ns), c.api.services(ns)
	if err := jobs.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &foreground}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	var get metav1.GetOptions
	dels := []func(context.Context, string, metav1.DeleteOptions) error{cms.Delete}
	gets := []func() error{
		func() error { _, err := jobs.Get(ctx, name, get); return err },
		func() error { _, err := cms.Get(ctx, name, get); return err },
	}
	if agents {
		dels = append(dels, secrets.Delete, svcs.Delete)
		gets = append(gets,
			func() error { _, err := secrets.Get(ctx, name, get); return err },
			func() error { _, err := svcs.Get(ctx, name, get); return err })
	}
	for _, del := range dels {
		if err := del(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return waitGone(ctx, c, batchv1.JobNameLabel+"="+name, func() (bool, error) {
		for _, get := range gets {
			if err := get(); !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		return true, nil
	})
}

// deleteRun deletes every Job and ConfigMap labelled with the run, and with agents (the
// run made a job of several) every such Secret and Service, and waits until none of
// them, and no pod so labelled, is left.
func deleteRun(ctx context.Context, c *cluster, label string, agents bool) error {
	sel := metav1.ListOptions{LabelSelector: LabelRun + "=" + label}
	opts := metav1.DeleteOptions{PropagationPolicy: &foreground}
	if err := c.api.jobs(c.namespace).DeleteCollection(ctx, opts, sel); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := c.api.configMaps(c.namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if !agents {
		return waitGone(ctx, c, sel.LabelSelector, func() (bool, error) {
			left, err := runObjects(ctx, c.api, c.namespace, label, false)
			return len(left) == 0, err
		})
	}
	if err := c.api.secrets(c.namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	// Services cannot be deleted as a collection: one by one.
	svcs, err := c.api.services(c.namespace).List(ctx, sel)
	if err != nil {
		return err
	}
	for _, svc := range svcs.Items {
		if err := c.api.services(c.namespace).Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return waitGone(ctx, c, sel.LabelSelector, func() (bool, error) {
		left, err := runObjects(ctx, c.api, c.namespace, label, true)
		return len(left) == 0, err
	})
}

// RunObjects lists the Jobs, ConfigMaps, pods and, with agents, Secrets and Services of
// the namespace labelled with the run (its label value), as "kind/name", in the cluster
// of cfg.
func RunObjects(ctx context.Context, cfg *rest.Config, namespace, runLabel string, agents bool) ([]string, error) {
	a, err := newAPI(cfg)
	if err != nil {
		return nil, err
	}
	return runObjects(ctx, a, namespace, runLabel, agents)
}

func runObjects(ctx context.Context, a *api, namespace, runLabel string, agents bool) ([]string, error) {
	sel := metav1.ListOptions{LabelSelector: LabelRun + "=" + runLabel}
	var left []string
	jobs, err := a.jobs(namespace).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for _, o := range jobs.Items {
		left = append(left, "job/"+o.Name)
	}
	cms, err := a.configMaps(namespace).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for _, o := range cms.Items {
		left = append(left, "configmap/"+o.Name)
	}
	pods, err := a.pods(namespace).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for _, o := range pods.Items {
		left = append(left, "pod/"+o.Name)
	}
	if !agents {
		return left, nil
	}
	secrets, err := a.secrets(namespace).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for _, o := range secrets.Items {
		left = append(left, "secret/"+o.Name)
	}
	svcs, err := a.services(namespace).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for _, o := range svcs.Items {
		left = append(left, "service/"+o.Name)
	}
	return left, nil
}

// waitGone polls until gone says so and no pod matches the selector.
func waitGone(ctx context.Context, c *cluster, podSelector string, gone func() (bool, error)) error {
	for {
		ok, err := gone()
		if err == nil && ok {
			pods, perr := c.api.pods(c.namespace).List(ctx, metav1.ListOptions{LabelSelector: podSelector})
			if perr == nil && len(pods.Items) == 0 {
				return nil
			}
			err = perr
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
			}
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

var _ placement.Scheduler = (*Scheduler)(nil)
