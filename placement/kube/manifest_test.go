//go:build !nokube

package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planrun/planrun/plan"

	// The plans name backend kinds, which connect registers.
	_ "github.com/planrun/planrun/backends/connect"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

const testPlan = `
variable "token" {
  type      = string
  sensitive = true
}
variable "rate" { default = 2 }
backend "openai" "gw" {
  url         = "https://gateway.example/v1"
  api_key_env = "PLANRUN_TEST_GATEWAY_KEY"
}
hardware "cluster" {
  kubernetes {
    image            = "planrun:dev"
    namespace        = "bench"
    env_from_secrets = ["gateway-keys"]
    resources {
      limits = { "nvidia.com/gpu" = 1 }
    }
  }
}
workload "w" {
  prompt_file = "prompts/p.txt"
  max_tokens  = 8
}
matrix "m" {
  model    = ["a", "b"]
  tool     = [backend.openai.gw]
  hardware = [hardware.cluster]
  workload = [workload.w]
}
`

func loadTestPlan(t *testing.T) (*plan.Plan, []*plan.Cell) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "prompts"), 0o755)
	os.WriteFile(filepath.Join(dir, "prompts", "p.txt"), []byte("hello"), 0o644)
	os.WriteFile(filepath.Join(dir, "plan.hcl"), []byte(testPlan), 0o644)
	env := map[string]string{"PLANRUN_VAR_token": "s3cret-token-value"}
	p, diags := plan.Load(filepath.Join(dir, "plan.hcl"), plan.LoadOptions{Getenv: func(k string) string { return env[k] }, Placements: []plan.PlacementKind{Kind.Block}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cells, diags := p.Cells()
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return p, cells
}

// One Job a cell, Indexed with one completion and no retry, its failure policy naming
// planrun's exit codes; the ConfigMap holds the plan, the file it read and its values.
// No secret value is in either object: keys reach the pod from the Secret it names.
func TestObjects(t *testing.T) {
	t.Setenv("PLANRUN_TEST_GATEWAY_KEY", "sk-live-do-not-leak")
	p, cells := loadTestPlan(t)
	jobs, err := NewJobs(p, cells, "plan-2026-01-02T03-04-05-abcd1234", "/runs/r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].Name != "cluster-1" || jobs[1].Name != "cluster-2" || jobs[0].Dir != "/runs/r1/kubernetes/cluster-1" {
		t.Fatalf("jobs %+v", jobs)
	}
	o := NewObjects(jobs[0])
	cm, job := o.ConfigMap, o.Job
	if o.Secret != nil || o.Service != nil || len(o.All()) != 2 {
		t.Errorf("a cell of one agent gets a Secret %v or a Service %v", o.Secret, o.Service)
	}
	if errs := validation.IsDNS1123Label(job.Name); len(errs) > 0 {
		t.Errorf("Job name %q: %v", job.Name, errs)
	}
	for k, v := range job.Labels {
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("label %s=%q: %v", k, v, errs)
		}
	}
	s := job.Spec
	if *s.CompletionMode != "Indexed" || *s.Completions != 1 || *s.Parallelism != 1 || *s.BackoffLimit != 0 ||
		*s.TTLSecondsAfterFinished != 3600 || len(s.PodFailurePolicy.Rules) != len(exitClasses)+2 {
		t.Errorf("job spec %+v", s)
	}
	if got := s.PodFailurePolicy.Rules[3].OnExitCodes.Values; len(got) != 1 || got[0] != 4 {
		t.Errorf("rule 3 is exit code %v, want planrun's 4 (a cell failed)", got)
	}
	pod := s.Template.Spec
	c := pod.Containers[0]
	if pod.RestartPolicy != "Never" || *pod.AutomountServiceAccountToken || c.EnvFrom[0].SecretRef.Name != "gateway-keys" ||
		c.Resources.Limits.Name("nvidia.com/gpu", "").String() != "1" || c.Command[0] != "/usr/local/bin/planrun" {
		t.Errorf("pod spec %+v", pod)
	}
	if want := "apply -quiet -run-dir /planrun/run -stream -only m/a/-/openai.gw/cluster/w -var-file /planrun/input/variables.hcl /planrun/input/plan/plan.hcl"; strings.Join(c.Args, " ") != want {
		t.Errorf("args %q\nwant %q", strings.Join(c.Args, " "), want)
	}
	paths := map[string]bool{}
	for _, it := range pod.Volumes[0].ConfigMap.Items {
		paths[it.Path] = true
		if _, ok := cm.Data[it.Key]; !ok {
			t.Errorf("item %s names no key of the ConfigMap", it.Key)
		}
	}
	if !paths["plan/plan.hcl"] || !paths["plan/prompts/p.txt"] || !paths["variables.hcl"] {
		t.Errorf("the ConfigMap's files: %v", paths)
	}
	for _, obj := range []any{cm, job} {
		b, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"sk-live-do-not-leak", "s3cret-token-value"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("a secret value is in the %T:\n%s", obj, b)
			}
		}
	}
	for _, it := range pod.Volumes[0].ConfigMap.Items {
		if it.Path == "variables.hcl" && (!strings.Contains(cm.Data[it.Key], "# token is sensitive and not copied") || !strings.Contains(cm.Data[it.Key], "rate = 2")) {
			t.Errorf("variables.hcl:\n%s", cm.Data[it.Key])
		}
	}
}

// A cell of three agents is a Job of three indices, all at once, whose every pod runs
// `planrun agent -lead apply ...`; a failed index fails itself alone. Its headless Service
// names the pods (index 0 is <job>-0.<service>.<namespace>.svc), and the agents' token
// comes from the job's Secret, which holds nothing until apply creates it.
func TestObjectsOfSeveralAgents(t *testing.T) {
	p, cells := loadTestPlan(t)
	cells[0].Workload.Agents = 3 // the workload of both cells
	jobs, err := NewJobs(p, cells, "plan-2026-01-02T03-04-05-abcd1234", "/runs/r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].Agents != 3 || jobs[1].Agents != 3 {
		t.Fatalf("jobs %+v, want two of 3 agents each", jobs)
	}
	o := NewObjects(jobs[0])
	name := jobs[0].ObjectName
	if o.Secret == nil || o.Service == nil || len(o.All()) != 4 {
		t.Fatalf("objects %+v", o)
	}
	s := o.Job.Spec
	if *s.Completions != 3 || *s.Parallelism != 3 || s.BackoffLimit != nil || *s.BackoffLimitPerIndex != 0 {
		t.Errorf("completions %d, parallelism %d, backoffLimit %v, backoffLimitPerIndex %v", *s.Completions, *s.Parallelism, s.BackoffLimit, s.BackoffLimitPerIndex)
	}
	for i, r := range s.PodFailurePolicy.Rules {
		if r.Action != "FailIndex" {
			t.Errorf("rule %d: %s, want FailIndex", i, r.Action)
		}
	}
	pod := s.Template.Spec
	c := pod.Containers[0]
	if pod.Subdomain != name || o.Service.Name != name || o.Service.Spec.ClusterIP != "None" || !o.Service.Spec.PublishNotReadyAddresses ||
		o.Service.Spec.Selector["batch.kubernetes.io/job-name"] != name || o.Service.Labels[LabelRun] == "" {
		t.Errorf("subdomain %q, service %+v", pod.Subdomain, o.Service)
	}
	port := LeadPort(name)
	if port < 20000 || port >= 30000 || o.Service.Spec.Ports[0].Port != int32(port) {
		t.Errorf("port %d, the Service's %+v", port, o.Service.Spec.Ports)
	}
	if !strings.HasPrefix(strings.Join(c.Args, " "), "agent -lead -- apply -quiet -run-dir /planrun/run -stream -only ") {
		t.Errorf("args %q", c.Args)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "secret " + e.ValueFrom.SecretKeyRef.Name + " " + e.ValueFrom.SecretKeyRef.Key
		case e.ValueFrom != nil:
			env[e.Name] = "field " + e.ValueFrom.FieldRef.FieldPath
		default:
			env[e.Name] = e.Value
		}
	}
	want := map[string]string{
		"PLANRUN_AGENT_LEAD":    fmt.Sprintf("%s-0.%s.$(PLANRUN_POD_NAMESPACE).svc:%d", name, name, port),
		"PLANRUN_AGENT_LISTEN":  fmt.Sprintf("$(PLANRUN_POD_IP):%d", port),
		"PLANRUN_AGENT_COUNT":   "3",
		"PLANRUN_AGENT_TOKEN":   "secret " + name + " token",
		"PLANRUN_AGENT_WAIT":    "1h0m0s",
		"PLANRUN_POD_IP":        "field status.podIP",
		"PLANRUN_POD_NAMESPACE": "field metadata.namespace",
		"PLANRUN_AGENT_POD":     "field metadata.name",
		"PLANRUN_AGENT_NODE":    "field spec.nodeName",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s=%q, want %q", k, env[k], v)
		}
	}
	// Variables used in $(...) are defined before their use, as Kubernetes expands them.
	seen := map[string]bool{}
	for _, e := range c.Env {
		for _, ref := range []string{"PLANRUN_POD_IP", "PLANRUN_POD_NAMESPACE"} {
			if strings.Contains(e.Value, "$("+ref+")") && !seen[ref] {
				t.Errorf("%s uses %s before it is defined", e.Name, ref)
			}
		}
		seen[e.Name] = true
	}
	if len(o.Secret.Data) != 0 || len(o.Secret.StringData) != 0 {
		t.Errorf("the Secret holds %v before apply creates it", o.Secret.Data)
	}
	if errs := validation.IsDNS1123Label(fmt.Sprintf("%s-%d", name, 255)); len(errs) > 0 {
		t.Errorf("a pod's host name %s-255: %v", name, errs)
	}
	// The longest name objectName makes (its job name cut to 40) still leaves room for the index.
	if long := objectName(strings.Repeat("h", 80), "r"); len(validation.IsDNS1123Label(long+"-255")) > 0 || len(long) < 55 {
		t.Errorf("a pod's host name %s-255 from an 80-character job name: %v", long, validation.IsDNS1123Label(long+"-255"))
	}
}

// A file the plan reads from outside its directory cannot reach the pod: an error names it.
func TestInputsOutsideThePlan(t *testing.T) {
	p, cells := loadTestPlan(t)
	p.ReadFiles = append(p.ReadFiles, "/etc/hostname")
	_, err := NewJobs(p, cells, "r", "/runs/r")
	if err == nil || !strings.Contains(err.Error(), "/etc/hostname, outside its directory") {
		t.Errorf("err = %v", err)
	}
}

// Label values stay valid whatever the run or cell id.
func TestLabelValue(t *testing.T) {
	for _, s := range []string{"m/qwen2.5-7b/q4_K_M/ollama.local/rtx4060/short", "-x-", strings.Repeat("long/", 40), "kubernetes-2026-12-06T05-51-58-ab12cd34"} {
		v := LabelValue(s)
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 || v == "" {
			t.Errorf("LabelValue(%q) = %q: %v", s, v, errs)
		}
	}
}
