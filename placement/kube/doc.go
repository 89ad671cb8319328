// Package kube runs a plan's Kubernetes-placed cells as Indexed Jobs. Each Job's pod runs
// planrun itself on its cells, from the planrun agent image:
//
//	planrun apply -quiet -run-dir /planrun/run -stream -only ID ... -var-file /planrun/input/variables.hcl PLAN
//
// with the plan's files, the files it reads and its resolved variables in a ConfigMap the
// pod mounts. The agent's rows, request records and manifest come back as frames in the
// pod's log (frames.go), which the coordinator follows through the Kubernetes API and
// writes into the job's directory, where apply merges them as it merges a Slurm job's.
// Scheduler is all of that as the placement.Scheduler apply's coordinator follows jobs
// through; it calls the API through client-go's REST client over the two API groups it
// uses (api.go).
//
// The kubernetes { } block (block.go, names.go), the pod's side (frames.go) and the Job
// a pod's apply runs in (kind.go) link no Kubernetes module, so that a build with
// -tags nokube (the agent image's, a remote agent's) has none of them: in that build the
// Scheduler is nokube.go's, which refuses to place cells and says why.
package kube
