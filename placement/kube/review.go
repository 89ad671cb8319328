//go:build !nokube

package kube

import (
	"slices"

	"github.com/planrun/planrun/plan"

	"sigs.k8s.io/yaml"
)

// Missing is empty: this build places cells on Kubernetes (nokube.go's says why one
// does not).
const Missing = ""

// Manifests are the objects apply would create for hardware's cells, as YAML documents
// for review (planrun plan -k8s-manifest): a ConfigMap and a Job per cell (or one pair
// for jobs = "per_hardware"), and for a cell of several load agents the Job's Secret and
// headless Service too (secrets). runID and runDir stand for the run's. others are the
// Kubernetes hardware blocks of the other cells, for the error when hardware has none.
func Manifests(p *plan.Plan, cells []*plan.Cell, hardware, runID, runDir string) (docs [][]byte, secrets bool, others []string, err error) {
	jobs, err := NewJobs(p, cells, runID, runDir)
	if err != nil {
		return nil, false, nil, err
	}
	for _, j := range jobs {
		if j.Hardware != hardware {
			if !slices.Contains(others, j.Hardware) {
				others = append(others, j.Hardware)
			}
			continue
		}
		objs := NewObjects(j)
		secrets = secrets || objs.Secret != nil
		for _, obj := range objs.All() {
			b, err := yaml.Marshal(obj)
			if err != nil {
				return nil, false, nil, err
			}
			docs = append(docs, b)
		}
	}
	return docs, secrets, others, nil
}
