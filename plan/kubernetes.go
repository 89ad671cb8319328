package plan

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Kubernetes is a hardware block's kubernetes { ... } sub-block: its cells run as
// Kubernetes Jobs (package kube) whose pods run planrun on the cell. Names and
// quantities are checked here with Kubernetes' own rules (k8s.io/apimachinery); whether
// the kubeconfig and its context exist is checked when apply starts, before anything is
// sent (kube.Scheduler.Check), since it depends on the machine rather than the plan.
type Kubernetes struct {
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

// The values of Kubernetes.Jobs: Slurm's, with the other default.
const (
	KubeJobsPerCell     = "per_cell"
	KubeJobsPerHardware = "per_hardware"
)

// The defaults of a kubernetes block.
const (
	DefaultKubeTTL          = time.Hour
	DefaultKubeStartTimeout = 5 * time.Minute
)

// PlaceKubernetes: as Kubernetes Indexed Jobs whose pods run planrun on the cell.
const PlaceKubernetes Placement = "kubernetes"

var kubernetesSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "kubeconfig"}, {Name: "context"}, {Name: "namespace"}, {Name: "image"}, {Name: "image_pull_policy"},
		{Name: "service_account"}, {Name: "node_selector"}, {Name: "tolerations"}, {Name: "host_network"},
		{Name: "labels"}, {Name: "annotations"}, {Name: "env_from_secrets"}, {Name: "jobs"},
		{Name: "ttl_after_finished"}, {Name: "start_timeout"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "resources"}},
}

var kubeResourcesSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "requests"}, {Name: "limits"}},
}

var (
	kubePullPolicies = []string{"Always", "IfNotPresent", "Never"}
	kubeOperators    = []string{"Exists", "Equal"}
	kubeEffects      = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
	kubeJobsModes    = []string{KubeJobsPerCell, KubeJobsPerHardware}
)

func (l *loader) decodeKubernetesBlock(b *hcl.Block, ctx *hcl.EvalContext) *Kubernetes {
	k := &Kubernetes{Jobs: KubeJobsPerCell, TTL: DefaultKubeTTL, StartTimeout: DefaultKubeStartTimeout,
		DeclRange: b.DefRange, ContextRange: b.DefRange}
	content, diags := b.Body.Content(kubernetesSchema)
	l.add(diags)
	a := content.Attributes
	if l.decode(a["kubeconfig"], ctx, &k.Kubeconfig) && k.Kubeconfig != "" && !strings.HasPrefix(k.Kubeconfig, "~") {
		k.Kubeconfig = l.resolvePath(k.Kubeconfig)
	}
	if l.decode(a["context"], ctx, &k.Context) {
		k.ContextRange = a["context"].Expr.Range()
	}
	if l.decode(a["namespace"], ctx, &k.Namespace) && k.Namespace != "" {
		l.kubeName(a["namespace"], k.Namespace, validation.IsDNS1123Label, "a DNS-1123 label")
	}
	if !l.decode(a["image"], ctx, &k.Image) || strings.TrimSpace(k.Image) == "" {
		subject := b.DefRange.Ptr()
		if a["image"] != nil {
			subject = a["image"].Expr.Range().Ptr()
		}
		l.errorf(subject, "Missing image", "A kubernetes block names the image its pods run planrun from: image = \"planrun:dev\" (planrun image writes one as a tarball the cluster can import).")
	} else if strings.ContainsAny(k.Image, " \t\n") {
		l.errorf(a["image"].Expr.Range().Ptr(), "Invalid image", "An image reference has no spaces: %q.", k.Image)
	}
	if l.decode(a["image_pull_policy"], ctx, &k.PullPolicy) && !slices.Contains(kubePullPolicies, k.PullPolicy) {
		l.errorf(a["image_pull_policy"].Expr.Range().Ptr(), "Invalid image_pull_policy", "image_pull_policy is %s, not %q.%s",
			quoteList(kubePullPolicies), k.PullPolicy, suggestion(k.PullPolicy, kubePullPolicies))
	}
	if l.decode(a["service_account"], ctx, &k.ServiceAccount) && k.ServiceAccount != "" {
		l.kubeName(a["service_account"], k.ServiceAccount, validation.IsDNS1123Subdomain, "a DNS-1123 subdomain")
	}
	if l.decode(a["env_from_secrets"], ctx, &k.EnvFromSecrets) {
		for _, s := range k.EnvFromSecrets {
			l.kubeName(a["env_from_secrets"], s, validation.IsDNS1123Subdomain, "a DNS-1123 subdomain (a Secret's name)")
		}
	}
	k.NodeSelector = l.kubeLabels(a["node_selector"], ctx, true)
	k.Labels = l.kubeLabels(a["labels"], ctx, true)
	for key := range k.Labels {
		if strings.HasPrefix(key, "planrun.dev/") {
			l.errorf(a["labels"].Expr.Range().Ptr(), "Reserved label", "Labels under planrun.dev/ are planrun's own (run, cell, hardware): %q.", key)
		}
	}
	k.Annotations = l.kubeLabels(a["annotations"], ctx, false)
	k.Tolerations = l.kubeTolerations(a["tolerations"], ctx)
	l.decode(a["host_network"], ctx, &k.HostNetwork)
	k.jobsAt = b.DefRange
	if a["jobs"] != nil {
		k.jobsAt = a["jobs"].Expr.Range()
	}
	if l.decode(a["jobs"], ctx, &k.Jobs) && !slices.Contains(kubeJobsModes, k.Jobs) {
		l.errorf(a["jobs"].Expr.Range().Ptr(), "Invalid jobs",
			"jobs is %q (one Job a cell) or %q (one Job runs all this hardware's cells, in plan order), not %q.%s",
			KubeJobsPerCell, KubeJobsPerHardware, k.Jobs, suggestion(k.Jobs, kubeJobsModes))
	}
	l.kubeDuration(a["ttl_after_finished"], ctx, &k.TTL)
	l.kubeDuration(a["start_timeout"], ctx, &k.StartTimeout)
	seen := false
	for _, rb := range content.Blocks {
		if seen {
			l.errorf(rb.DefRange.Ptr(), "Duplicate resources block", "A kubernetes block has at most one resources block.")
			continue
		}
		seen = true
		rc, d := rb.Body.Content(kubeResourcesSchema)
		l.add(d)
		k.Requests = l.kubeQuantities(rc.Attributes["requests"], ctx)
		k.Limits = l.kubeQuantities(rc.Attributes["limits"], ctx)
		l.kubeRequestsWithinLimits(rc.Attributes["requests"], k)
	}
	return k
}

// kubeName reports a name that breaks Kubernetes' rule for it, in Kubernetes' words.
func (l *loader) kubeName(a *hcl.Attribute, name string, check func(string) []string, what string) {
	if errs := check(name); len(errs) > 0 {
		l.errorf(a.Expr.Range().Ptr(), "Invalid "+a.Name, "%q is not %s: %s.", name, what, strings.Join(errs, "; "))
	}
}

// kubeLabels decodes a map of label keys (qualified names) to strings; label values are
// checked too when values are labels (not annotations).
func (l *loader) kubeLabels(a *hcl.Attribute, ctx *hcl.EvalContext, values bool) map[string]string {
	var m map[string]string
	if !l.decode(a, ctx, &m) {
		return nil
	}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			l.errorf(a.Expr.Range().Ptr(), "Invalid "+a.Name, "key %q: %s.", key, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(m[key]); values && len(errs) > 0 {
			l.errorf(a.Expr.Range().Ptr(), "Invalid "+a.Name, "the value of %q, %q: %s.", key, m[key], strings.Join(errs, "; "))
		}
	}
	return m
}

// kubeQuantities decodes resource names to quantities: a number (1, 0.5) or a string in
// Kubernetes' quantity syntax ("500m", "1Gi"), parsed by apimachinery's own parser.
func (l *loader) kubeQuantities(a *hcl.Attribute, ctx *hcl.EvalContext) map[string]string {
	if a == nil {
		return nil
	}
	v, ok := l.eval(a.Expr, ctx, scopePlan)
	if !ok || v.IsNull() || !v.IsKnown() {
		return nil
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		l.errorf(a.Expr.Range().Ptr(), "Invalid "+a.Name, "%s maps resource names to quantities: { cpu = \"500m\", memory = \"1Gi\", \"nvidia.com/gpu\" = 1 }.", a.Name)
		return nil
	}
	out := map[string]string{}
	for key, ev := range v.AsValueMap() {
		sv, err := convert.Convert(ev, cty.String)
		if err != nil || sv.IsNull() || !sv.IsKnown() {
			l.errorf(a.Expr.Range().Ptr(), "Invalid quantity", "%s: %q is a number or a string such as \"500m\" or \"1Gi\".", a.Name, key)
			continue
		}
		q := sv.AsString()
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			l.errorf(a.Expr.Range().Ptr(), "Invalid resource name", "%s: %q: %s.", a.Name, key, strings.Join(errs, "; "))
		}
		if _, err := resource.ParseQuantity(q); err != nil {
			l.errorf(a.Expr.Range().Ptr(), "Invalid quantity", "%s: %s = %q: %v (Kubernetes quantities look like \"500m\", \"2\", \"1Gi\", \"1.5G\").", a.Name, key, q, err)
			continue
		}
		out[key] = q
	}
	return out
}

// kubeRequestsWithinLimits reports a request above its limit, which the API server
// refuses.
func (l *loader) kubeRequestsWithinLimits(a *hcl.Attribute, k *Kubernetes) {
	for _, name := range slices.Sorted(maps.Keys(k.Requests)) {
		lim, ok := k.Limits[name]
		if !ok {
			continue
		}
		rq, lq := resource.MustParse(k.Requests[name]), resource.MustParse(lim)
		if rq.Cmp(lq) > 0 {
			l.errorf(a.Expr.Range().Ptr(), "Request above limit", "requests.%s = %q is more than limits.%s = %q: Kubernetes refuses such a pod.", name, k.Requests[name], name, lim)
		}
	}
}

// kubeTolerations decodes a list of toleration objects, as a pod spec has them.
func (l *loader) kubeTolerations(a *hcl.Attribute, ctx *hcl.EvalContext) []Toleration {
	if a == nil {
		return nil
	}
	v, ok := l.eval(a.Expr, ctx, scopePlan)
	if !ok || v.IsNull() || !v.IsKnown() {
		return nil
	}
	if !v.CanIterateElements() {
		l.errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "tolerations is a list of objects: [{ key = \"nvidia.com/gpu\", operator = \"Exists\", effect = \"NoSchedule\" }].")
		return nil
	}
	var out []Toleration
	fields := []string{"key", "operator", "value", "effect", "toleration_seconds"}
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if !ev.Type().IsObjectType() && !ev.Type().IsMapType() {
			l.errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "each toleration is an object with %s.", quoteList(fields))
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
					l.errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "toleration_seconds is a whole number of seconds.")
				}
				continue
			}
			sv, err := convert.Convert(fv, cty.String)
			if err != nil || !sv.IsKnown() {
				l.errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "%s is a string.", key)
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
				l.errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "a toleration has %s, not %q.%s", quoteList(fields), key, suggestion(key, fields))
			}
		}
		if t.Key != "" {
			if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
				l.errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "key %q: %s.", t.Key, strings.Join(errs, "; "))
			}
		}
		if t.Operator != "" && !slices.Contains(kubeOperators, t.Operator) {
			l.errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "operator is %s, not %q.", quoteList(kubeOperators), t.Operator)
		}
		if t.Effect != "" && !slices.Contains(kubeEffects, t.Effect) {
			l.errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "effect is %s (or unset for all), not %q.%s", quoteList(kubeEffects), t.Effect, suggestion(t.Effect, kubeEffects))
		}
		if t.Operator == "Exists" && t.Value != "" {
			l.errorf(a.Expr.Range().Ptr(), "Invalid tolerations", "a toleration with operator \"Exists\" has no value (%q).", t.Value)
		}
		out = append(out, t)
	}
	return out
}

// kubeDuration decodes a duration as every duration of the plan is (loader.duration, with
// its suggestions), which must be above 0 here.
func (l *loader) kubeDuration(a *hcl.Attribute, ctx *hcl.EvalContext, d *time.Duration) {
	if l.duration(a, ctx, d) && *d <= 0 {
		l.errorf(a.Expr.Range().Ptr(), "Invalid "+a.Name, "%s is a positive duration such as \"90s\" or \"10m\", not 0.", a.Name)
	}
}

// String says where the cells run, as `planrun plan` shows it.
func (k *Kubernetes) String() string {
	where := "Kubernetes"
	if k.Context != "" {
		where += " context " + k.Context
	}
	if k.Namespace != "" {
		where += fmt.Sprintf(" namespace %s", k.Namespace)
	}
	return where
}
