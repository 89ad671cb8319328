//go:build nokube

package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/plan"
)

// Missing says, in a build with -tags nokube, that it places no cell on Kubernetes.
const Missing = "this planrun was built with -tags nokube, without Kubernetes placement (the agent image's build); run a default build of planrun to place cells on Kubernetes"

// newScheduler is Kind's New in a build without the Kubernetes client: a scheduler that
// refuses, before anything is sent, every hardware block it is asked about.
func newScheduler(placement.Setup) placement.Scheduler { return unavailable{} }

type unavailable struct{}

var errMissing = errors.New(Missing)

func (unavailable) Name() string { return Name }

func (unavailable) Check(hardware string) error {
	return fmt.Errorf("hardware %q runs its cells on Kubernetes, but %s", hardware, Missing)
}

func (unavailable) Jobs([]string, string) ([]placement.Job, error)        { return nil, errMissing }
func (unavailable) Submit(context.Context, placement.Job) (string, error) { return "", errMissing }
func (unavailable) State(_ context.Context, id string) (placement.Status, error) {
	return placement.Status{ID: id}, errMissing
}
func (unavailable) Cancel(context.Context, string) error { return nil }
func (unavailable) WaitShared(context.Context, placement.Job, string, time.Duration) error {
	return errMissing
}
func (unavailable) LogPath(placement.Job, string) string { return "" }
func (unavailable) Close(context.Context) error          { return nil }

// Manifests is -k8s-manifest's output in this build: an error saying why there is none.
func Manifests(*plan.Plan, []*plan.Cell, string, string, string) (docs [][]byte, secrets bool, others []string, err error) {
	return nil, false, nil, errMissing
}
