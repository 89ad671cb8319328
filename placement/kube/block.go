package kube

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/planrun/planrun/internal/suggest"
	"github.com/planrun/planrun/plan"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// The hardware block's kubernetes { } sub-block, which plan keeps as a body and Kind
// decodes here, linking no Kubernetes module (names.go).

// Settings are a hardware block's kubernetes { ... } sub-block: its cells run as
// Kubernetes Jobs whose pods run planrun on the cell. Names and quantities are checked
// as the block is decoded, with Kubernetes' own rules (names.go); whether the kubeconfig
// and its context exist is checked when apply starts, before anything is sent
// (Scheduler.Check), since it depends on the machine rather than the plan.
type Settings struct {
	// Kubeconfig is the file to read; empty means $KUBECONFIG, then ~/.kube/config.
	Kubeconfig string
	// Context is the kubeconfig context; empty means its current-context.
	Context string
	// Namespace is where the Jobs and ConfigMaps go; empty means the context's namespace,
	// or "default".
	Namespace string
	// Image is the planrun agent image (planrun image builds one); PullPolicy is its
	// imagePullPolicy, empty leaving Kubernetes' default.
	Image, PullPolicy string
	ServiceAccount    string
	NodeSelector      map[string]string
	Tolerations       []Toleration
	// Requests and Limits are the agent container's resources, as Kubernetes
	// quantities ("500m", "1Gi", "1"), by resource name ("cpu", "nvidia.com/gpu").
	Requests, Limits map[string]string
	HostNetwork      bool
	// Labels and Annotations go on the Job and its pods, beside planrun's own labels.
	Labels, Annotations map[string]string
	// EnvFromSecrets are Secrets whose keys become the agent's environment variables
	// (envFrom): how API keys reach the pod, by reference, never by value.
	EnvFromSecrets []string
	// Jobs is JobsPerCell (the default: one Job a cell) or JobsPerHardware.
	Jobs string
	// TTL is the Job's ttlSecondsAfterFinished: how long a finished Job the coordinator
	// could not delete stays in the cluster.
	TTL time.Duration
	// StartTimeout is how long a pod may stay unscheduled or without its image before
	// its cells fail with what Kubernetes said.
	StartTimeout time.Duration
	// DeclRange is where the block was declared; ContextRange where context was given
	// (the block when it was not), for errors that name the plan's line.
	DeclRange, ContextRange hcl.Range
	jobsAt                  hcl.Range
}

// Toleration is one entry of tolerations, as a pod spec has it.
type Toleration struct {
	Key, Operator, Value, Effect string
	// Seconds is tolerationSeconds; nil leaves it unset.
	Seconds *int64
}

// The values of Settings.Jobs: Slurm's, with the other default.
const (
	JobsPerCell     = "per_cell"
	JobsPerHardware = "per_hardware"
)

// The defaults of a kubernetes block.
const (
	DefaultTTL          = time.Hour
	DefaultStartTimeout = 5 * time.Minute
)

var blockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "kubeconfig"}, {Name: "context"}, {Name: "namespace"}, {Name: "image"}, {Name: "image_pull_policy"},
		{Name: "service_account"}, {Name: "node_selector"}, {Name: "tolerations"}, {Name: "host_network"},
		{Name: "labels"}, {Name: "annotations"}, {Name: "env_from_secrets"}, {Name: "jobs"},
		{Name: "ttl_after_finished"}, {Name: "start_timeout"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "resources"}},
}

var resourcesSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "requests"}, {Name: "limits"}},
}

var (
	kubePullPolicies = []string{"Always", "IfNotPresent", "Never"}
	kubeOperators    = []string{"Exists", "Equal"}
	kubeEffects      = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
	kubeJobsModes    = []string{JobsPerCell, JobsPerHardware}
)

// decode decodes a kubernetes block, and refuses an agents block that lists hosts or a
// lead address beside it: a cell's agents are the pods of its Indexed Job, which
// dial its index 0 by the Job's own Service.
func decode(b *plan.BatchDecoder) plan.BatchSettings {
	k := &Settings{Jobs: JobsPerCell, TTL: DefaultTTL, StartTimeout: DefaultStartTimeout,
		DeclRange: b.Block.DefRange, ContextRange: b.Block.DefRange, jobsAt: b.Block.DefRange}
	content := b.Content(blockSchema)
	a := content.Attributes
	if b.Decode(a["kubeconfig"], &k.Kubeconfig) && k.Kubeconfig != "" && !strings.HasPrefix(k.Kubeconfig, "~") {
		k.Kubeconfig = b.Path(k.Kubeconfig)
	}
	if b.Decode(a["context"], &k.Context) {
		k.ContextRange = a["context"].Expr.Range()
	}
	if b.Decode(a["namespace"], &k.Namespace) && k.Namespace != "" {
		checkName(b, a["namespace"], k.Namespace, isDNS1123Label, "a DNS-1123 label")
	}
	if !b.Decode(a["image"], &k.Image) || strings.TrimSpace(k.Image) == "" {
		subject := b.Block.DefRange.Ptr()
		if a["image"] != nil {
			subject = a["image"].Expr.Range().Ptr()
		}
		b.Errorf(subject, "Missing image", "A kubernetes block names the image its pods run planrun from: image = \"planrun:dev\" (planrun image writes one as a tarball the cluster can import).")
	} else if strings.ContainsAny(k.Image, " \t\n") {
		b.Errorf(a["image"].Expr.Range().Ptr(), "Invalid image", "An image reference has no spaces: %q.", k.Image)
	}
	if b.Decode(a["image_pull_policy"], &k.PullPolicy) && !slices.Contains(kubePullPolicies, k.PullPolicy) {
		b.Errorf(a["image_pull_policy"].Expr.Range().Ptr(), "Invalid image_pull_policy", "image_pull_policy is %s, not %q.%s",
			plan.QuoteList(kubePullPolicies), k.PullPolicy, suggest.DidYouMean(k.PullPolicy, kubePullPolicies))
	}
	if b.Decode(a["service_account"], &k.ServiceAccount) && k.ServiceAccount != "" {
		checkName(b, a["service_account"], k.ServiceAccount, isDNS1123Subdomain, "a DNS-1123 subdomain")
	}
	if b.Decode(a["env_from_secrets"], &k.EnvFromSecrets) {
		for _, s := range k.EnvFromSecrets {
			checkName(b, a["env_from_secrets"], s, isDNS1123Subdomain, "a DNS-1123 subdomain (a Secret's name)")
		}
	}
	k.NodeSelector = decodeLabels(b, a["node_selector"], true)
	k.Labels = decodeLabels(b, a["labels"], true)
	for key := range k.Labels {
		if strings.HasPrefix(key, "planrun.dev/") {
			b.Errorf(a["labels"].Expr.Range().Ptr(), "Reserved label", "Labels under planrun.dev/ are planrun's own (run, cell, hardware): %q.", key)
		}
	}
	k.Annotations = decodeLabels(b, a["annotations"], false)
	k.Tolerations = decodeTolerations(b, a["tolerations"])
	b.Decode(a["host_network"], &k.HostNetwork)
	if a["jobs"] != nil {
		k.jobsAt = a["jobs"].Expr.Range()
	}
	if b.Decode(a["jobs"], &k.Jobs) && !slices.Contains(kubeJobsModes, k.Jobs) {
		b.Errorf(a["jobs"].Expr.Range().Ptr(), "Invalid jobs",
			"jobs is %q (one Job a cell) or %q (one Job runs all this hardware's cells, in plan order), not %q.%s",
			JobsPerCell, JobsPerHardware, k.Jobs, suggest.DidYouMean(k.Jobs, kubeJobsModes))
	}
	decodeDuration(b, a["ttl_after_finished"], &k.TTL)
	decodeDuration(b, a["start_timeout"], &k.StartTimeout)
	seen := false
	for _, rb := range content.Blocks {
		if seen {
			b.Errorf(rb.DefRange.Ptr(), "Duplicate resources block", "A kubernetes block has at most one resources block.")
			continue
		}
		seen = true
		rc, d := rb.Body.Content(resourcesSchema)
		b.Add(d)
		k.Requests = decodeQuantities(b, rc.Attributes["requests"])
		k.Limits = decodeQuantities(b, rc.Attributes["limits"])
		checkRequestsWithinLimits(b, rc.Attributes["requests"], k)
	}
	checkAgents(b)
	return k
}

// checkAgents refuses hosts or a lead address in the hardware's agents block: its
// agents are the pods of the cell's Indexed Job and dial its index 0 by the Job's own
// Service.
func checkAgents(b *plan.BatchDecoder) {
	h := b.Hardware
	if h.Agents == nil {
		return
	}
	if len(h.Agents.Hosts) > 0 {
		b.Errorf(h.Agents.HostsAt().Ptr(), "Conflicting placement",
			"Hardware %q runs its cells as Kubernetes Jobs (its kubernetes block at %s): its agents are the pods of the cell's Indexed Job, on the nodes Kubernetes picks, not hosts listed here.", h.Name, b.Block.DefRange)
	}
	if h.Agents.Lead != "" {
		b.Errorf(h.Agents.LeadAt().Ptr(), "Conflicting placement",
			"Hardware %q runs its cells as Kubernetes Jobs (its kubernetes block at %s): its agents dial the cell's lead, index 0 of its Indexed Job, by the Job's own headless Service, not an address given here.", h.Name, b.Block.DefRange)
	}
}

// CheckCell refuses a cell of several agents in a Job it would share with the
// hardware's other cells (jobs = "per_hardware"): its agents are the indices of its own
// Indexed Job, started with it.
func (k *Settings) CheckCell(c *plan.Cell) *hcl.Diagnostic {
	w := c.Workload
	if k.Jobs != JobsPerHardware || w == nil || w.Agents <= 1 {
		return nil
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Agents in a shared Kubernetes Job",
		Detail: fmt.Sprintf("Workload %q has agents = %d (at %s): on Kubernetes its agents are the indices of its cell's Indexed Job, "+
			"started with it, so the cell needs a Job of its own, but hardware %q runs all its cells in one Job (jobs = %q). Use jobs = %q (the default).",
			w.Name, w.Agents, w.AgentsAt(), c.Hardware.Name, JobsPerHardware, JobsPerCell),
		Subject: k.jobsAt.Ptr()}
}

// checkName reports a name that breaks Kubernetes' rule for it, in Kubernetes' words.
func checkName(b *plan.BatchDecoder, a *hcl.Attribute, name string, check func(string) []string, what string) {
	if errs := check(name); len(errs) > 0 {
		b.Errorf(a.Expr.Range().Ptr(), "Invalid "+a.Name, "%q is not %s: %s.", name, what, strings.Join(errs, "; "))
	}
}

// decodeLabels decodes a map of label keys (qualified names) to strings; label values
// are checked too when values are labels (not annotations).
func decodeLabels(b *plan.BatchDecoder, a *hcl.Attribute, values bool) map[string]string {
	var m map[string]string
	if !b.Decode(a, &m) {
		return nil
	}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		if errs := isQualifiedName(key); len(errs) > 0 {
			b.Errorf(a.Expr.Range().Ptr(), "Invalid "+a.Name, "key %q: %s.", key, strings.Join(errs, "; "))
		}
		if errs := isValidLabelValue(m[key]); values && len(errs) > 0 {
			b.Errorf(a.Expr.Range().Ptr(), "Invalid "+a.Name, "the value of %q, %q: %s.", key, m[key], strings.Join(errs, "; "))
		}
	}
	return m
}

// decodeQuantities decodes resource names to quantities: a number (1, 0.5) or a string
// in Kubernetes' quantity syntax ("500m", "1Gi").
func decodeQuantities(b *plan.BatchDecoder, a *hcl.Attribute) map[string]string {
	v, ok := b.Value(a)
	if !ok || v.IsNull() || !v.IsKnown() {
		return nil
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		b.Errorf(a.Expr.Range().Ptr(), "Invalid "+a.Name, "%s maps resource names to quantities: { cpu = \"500m\", memory = \"1Gi\", \"nvidia.com/gpu\" = 1 }.", a.Name)
		return nil
	}
	out := map[string]string{}
	for key, ev := range v.AsValueMap() {
		sv, err := convert.Convert(ev, cty.String)
		if err != nil || sv.IsNull() || !sv.IsKnown() {
			b.Errorf(a.Expr.Range().Ptr(), "Invalid quantity", "%s: %q is a number or a string such as \"500m\" or \"1Gi\".", a.Name, key)
			continue
		}
		q := sv.AsString()
		if errs := isQualifiedName(key); len(errs) > 0 {
			b.Errorf(a.Expr.Range().Ptr(), "Invalid resource name", "%s: %q: %s.", a.Name, key, strings.Join(errs, "; "))
		}
		if _, err := parseQuantity(q); err != nil {
			b.Errorf(a.Expr.Range().Ptr(), "Invalid quantity", "%s: %s = %q: %v (Kubernetes quantities look like \"500m\", \"2\", \"1Gi\", \"1.5G\").", a.Name, key, q, err)
			continue
		}
		out[key] = q
	}
	return out
}

// checkRequestsWithinLimits reports a request above its limit, which the API server
// refuses.
func checkRequestsWithinLimits(b *plan.BatchDecoder, a *hcl.Attribute, k *Settings) {
	for _, name := range slices.Sorted(maps.Keys(k.Requests)) {
		lim, ok := k.Limits[name]
		if !ok {
			continue
		}
		rq, _ := parseQuantity(k.Requests[name])
		lq, _ := parseQuantity(lim)
		if rq.Cmp(lq) > 0 {
			b.Errorf(a.Expr.Range().Ptr(), "Request above limit", "requests.%s = %q is more than limits.%s = %q: Kubernetes refuses such a pod.", name, k.Requests[name], name, lim)
		}
	}
}

// decodeTolerations decodes a list of toleration objects, as a pod spec has them.
func decodeTolerations(b *plan.BatchDecoder, a *hcl.Attribute) []Toleration {
	v, ok := b.Value(a)
	if !ok || v.IsNull() || !v.IsKnown() {
		return nil
	}
	if !v.CanIterateElements() {
		b.Errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "tolerations is a list of objects: [{ key = \"nvidia.com/gpu\", operator = \"Exists\", effect = \"NoSchedule\" }].")
		return nil
	}
	var out []Toleration
	fields := []string{"key", "operator", "value", "effect", "toleration_seconds"}
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if !ev.Type().IsObjectType() && !ev.Type().IsMapType() {
			b.Errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "each toleration is an object with %s.", plan.QuoteList(fields))
			continue
		}
		var t Toleration
		for key, fv := range ev.AsValueMap() {
			if fv.IsNull() {
				continue
			}
			if key == "toleration_seconds" {
				var n big.Float
				if nv, err := convert.Convert(fv, cty.Number); err == nil && nv.IsKnown() {
					n.Set(nv.AsBigFloat())
					s, _ := n.Int64()
					t.Seconds = &s
				} else {
					b.Errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "toleration_seconds is a whole number of seconds.")
				}
				continue
			}
			sv, err := convert.Convert(fv, cty.String)
			if err != nil || !sv.IsKnown() {
				b.Errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "%s is a string.", key)
				continue
			}
			switch key {
			case "key":
				t.Key = sv.AsString()
			case "operator":
				t.Operator = sv.AsString()
			case "value":
				t.Value = sv.AsString()
			case "effect":
				t.Effect = sv.AsString()
			default:
				b.Errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "a toleration has %s, not %q.%s", plan.QuoteList(fields), key, suggest.DidYouMean(key, fields))
			}
		}
		if t.Key != "" {
			if errs := isQualifiedName(t.Key); len(errs) > 0 {
				b.Errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "key %q: %s.", t.Key, strings.Join(errs, "; "))
			}
		}
		if t.Operator != "" && !slices.Contains(kubeOperators, t.Operator) {
			b.Errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "operator is %s, not %q.", plan.QuoteList(kubeOperators), t.Operator)
		}
		if t.Effect != "" && !slices.Contains(kubeEffects, t.Effect) {
			b.Errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "effect is %s (or unset for all), not %q.%s", plan.QuoteList(kubeEffects), t.Effect, suggest.DidYouMean(t.Effect, kubeEffects))
		}
		if t.Operator == "Exists" && t.Value != "" {
			b.Errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "a toleration with operator \"Exists\" has no value (%q).", t.Value)
		}
		out = append(out, t)
	}
	return out
}

// decodeDuration decodes a duration as every duration of the plan is (with its
// suggestions), which must be above 0 here.
func decodeDuration(b *plan.BatchDecoder, a *hcl.Attribute, d *time.Duration) {
	if b.Duration(a, d) && *d <= 0 {
		b.Errorf(a.Expr.Range().Ptr(), "Invalid "+a.Name, "%s is a positive duration such as \"90s\" or \"10m\", not 0.", a.Name)
	}
}

// String says where the cells run, as `planrun plan` shows it.
func (k *Settings) String() string {
	where := "Kubernetes"
	if k.Context != "" {
		where += " context " + k.Context
	}
	if k.Namespace != "" {
		where += fmt.Sprintf(" namespace %s", k.Namespace)
	}
	return where
}
