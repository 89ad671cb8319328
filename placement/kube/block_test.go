package kube

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/plan"
)

// loadOptions load a plan with this package's block, and no environment.
var loadOptions = plan.LoadOptions{Getenv: func(string) string { return "" }, Placements: []plan.PlacementKind{Kind.Block}}

const kubePlan = `
variable "gpus" { default = 1 }
backend "openai" "vllm" { url = "http://vllm.bench.svc:8000/v1" }
hardware "h200" {
  gpu = "NVIDIA H200"
  kubernetes {
    kubeconfig        = "kube/config"
    context           = "lab"
    namespace         = "bench"
    image             = "registry.lab/planrun:1.4"
    image_pull_policy = "IfNotPresent"
    service_account   = "planrun-agent"
    node_selector     = { "nvidia.com/gpu.product" = "NVIDIA-H200" }
    tolerations       = [{ key = "nvidia.com/gpu", operator = "Exists", effect = "NoSchedule" }, { key = "spot", value = "yes", toleration_seconds = 60 }]
    host_network      = true
    labels            = { team = "inference" }
    annotations       = { "owner" = "Bench team <bench@lab>" }
    env_from_secrets  = ["planrun-keys"]
    jobs              = "per_hardware"
    ttl_after_finished = "30m"
    start_timeout     = "90s"
    resources {
      requests = { cpu = "2", memory = "4Gi" }
      limits   = { memory = "8Gi", "nvidia.com/gpu" = var.gpus }
    }
  }
}
workload "w" { prompt = "hi" }
matrix "m" {
  model    = ["x"]
  tool     = [backend.openai.vllm]
  hardware = [hardware.h200]
  workload = [workload.w]
}
`

// A kubernetes block decodes as written: quantities from numbers become Kubernetes
// quantity strings, relative kubeconfig paths resolve against the plan, and the block
// places its cells on Kubernetes.
func TestKubernetesBlock(t *testing.T) {
	p, diags := plan.LoadFiles("/plans", map[string][]byte{"/plans/plan.hcl": []byte(kubePlan)}, loadOptions)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	h := p.Hardware[0]
	if h.Placement() != Name {
		t.Fatalf("placement %q", h.Placement())
	}
	k := *h.Batch.Settings.(*Settings)
	secs := int64(60)
	want := Settings{
		Kubeconfig: "/plans/kube/config", Context: "lab", Namespace: "bench", Image: "registry.lab/planrun:1.4",
		PullPolicy: "IfNotPresent", ServiceAccount: "planrun-agent",
		NodeSelector: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H200"},
		Tolerations: []Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"},
			{Key: "spot", Value: "yes", Seconds: &secs}},
		Requests: map[string]string{"cpu": "2", "memory": "4Gi"}, Limits: map[string]string{"memory": "8Gi", "nvidia.com/gpu": "1"},
		HostNetwork: true, Labels: map[string]string{"team": "inference"}, Annotations: map[string]string{"owner": "Bench team <bench@lab>"},
		EnvFromSecrets: []string{"planrun-keys"}, Jobs: JobsPerHardware, TTL: 30 * time.Minute,
		StartTimeout: 90 * time.Second, DeclRange: k.DeclRange, ContextRange: k.ContextRange, jobsAt: k.jobsAt,
	}
	if !reflect.DeepEqual(k, want) {
		t.Errorf("kubernetes block\n got %+v\nwant %+v", k, want)
	}
	if k.ContextRange.Start.Line != 8 {
		t.Errorf("context range %v, want line 8", k.ContextRange)
	}
	if s := k.String(); s != "Kubernetes context lab namespace bench" {
		t.Errorf("String() = %q", s)
	}
}

// The defaults of a block that gives only the image.
func TestKubernetesDefaults(t *testing.T) {
	src := strings.Replace(kubePlan, kubePlan[strings.Index(kubePlan, "  kubernetes {"):strings.Index(kubePlan, "workload \"w\"")],
		"  kubernetes { image = \"planrun:dev\" }\n}\n", 1)
	p, diags := plan.LoadFiles("/plans", map[string][]byte{"/plans/plan.hcl": []byte(src)}, loadOptions)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	k := p.Hardware[0].Batch.Settings.(*Settings)
	if k.Jobs != JobsPerCell || k.TTL != DefaultTTL || k.StartTimeout != DefaultStartTimeout ||
		k.Kubeconfig != "" || k.Namespace != "" || k.HostNetwork || k.PullPolicy != "" {
		t.Errorf("defaults: %+v", k)
	}
}
