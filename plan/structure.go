package plan

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/planrun/planrun/internal/suggest"
)

// schemaTree is every block body's schema by its path from the top of a file
// ("workload.slo"): the one map of where each block and argument belongs, so a name
// written in the wrong body is answered with its proper parent instead of HCL's "not
// expected here". A body read with JustAttributes (locals) takes any name and is absent.
var schemaTree = map[string]*hcl.BodySchema{
	"":                       rootSchema,
	"variable":               variableSchema,
	"variable.validation":    validationSchema,
	"backend":                backendSchema,
	"backend.timeouts":       timeoutsSchema,
	"server":                 serverSchema,
	"server.ready":           readySchema,
	"hardware":               hardwareSchema(nil),
	"hardware.telemetry":     telemetrySchema,
	"hardware.power":         powerSchema,
	"hardware.agents":        agentsSchema,
	"workload":               workloadSchema,
	"workload.timeouts":      timeoutsSchema,
	"workload.slo":           sloSchema,
	"workload.capacity":      capacitySchema,
	"workload.prefix":        prefixSchema,
	"workload.session":       sessionSchema,
	"workload.session.agent": agentSchema,
	"workload.replay":        replaySchema,
	"workload.embeddings":    embeddingsSchema,
	"workload.precision":     precisionSchema,
	"workload.tool":          toolSchema,
	"matrix":                 matrixSchema,
	"matrix.exclude":         excludeSchema,
	"matrix.include":         includeSchema,
	"reference":              referenceSchema,
	"expect":                 expectSchema,
	"output":                 outputSchema,
	"dataset":                datasetSchema,
	"decision":               decisionSchema,
}

// schemaTreeWith is schemaTree with the placement kinds a plan was loaded with: each
// kind's sub-block in the hardware block, and its bodies under hardware.<kind>.
func schemaTreeWith(kinds []PlacementKind) map[string]*hcl.BodySchema {
	tree := make(map[string]*hcl.BodySchema, len(schemaTree)+2*len(kinds))
	for p, s := range schemaTree {
		tree[p] = s
	}
	tree["hardware"] = hardwareSchema(kinds)
	for _, k := range kinds {
		for sub, s := range k.Schemas {
			p := "hardware." + k.Name
			if sub != "" {
				p += "." + sub
			}
			tree[p] = s
		}
	}
	return tree
}

// precisionSchema is the names a precision block takes (it is read attribute by
// attribute, so unknown figures get their own message): only for schemaTree.
var precisionSchema = func() *hcl.BodySchema {
	s := &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "max_requests"}, {Name: "max_duration"}}}
	for _, f := range PrecisionFigures {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: f})
	}
	return s
}()

var (
	unsupportedArgument = regexp.MustCompile(`^An argument named "([^"]+)" is not expected here`)
	unsupportedBlock    = regexp.MustCompile(`^Blocks of type "([^"]+)" are not expected here`)
)

// placeStructure rewrites HCL's "not expected here" errors with what the plan's schema
// knows: a name near one this body takes (ranked, at most three), where a block or
// argument of that name belongs when it is written in the wrong body, and whether the
// name is a block or an argument where it was written with the other's syntax.
func placeStructure(diags hcl.Diagnostics, files map[string]*hcl.File, tree map[string]*hcl.BodySchema) {
	for _, d := range diags {
		if d.Subject == nil {
			continue
		}
		re, isBlock := unsupportedArgument, false
		switch d.Summary {
		case "Unsupported argument":
		case "Unsupported block type":
			re, isBlock = unsupportedBlock, true
		default:
			continue
		}
		m := re.FindStringSubmatch(d.Detail)
		if m == nil {
			continue // one of planrun's own, which already says why
		}
		path, ok := bodyPath(files, *d.Subject)
		if !ok {
			continue
		}
		if summary, detail := placement(tree, m[1], isBlock, path); detail != "" {
			d.Summary, d.Detail = summary, detail
		}
	}
}

// placement is the summary and detail for name written in the body at path, as a
// block (isBlock) or an argument; "" when the schema knows nothing better than HCL.
func placement(tree map[string]*hcl.BodySchema, name string, isBlock bool, path string) (summary, detail string) {
	here := tree[path]
	if here == nil {
		return "", ""
	}
	what, summary := "An argument", "Unsupported argument"
	if isBlock {
		what, summary = "A block", "Unsupported block type"
	}
	in := homesText([]string{path}) // "in a workload block", "at the top level of the plan"
	homes := homesOf(tree, name, isBlock, path)
	if s, d := kindMismatch(here, name, isBlock, in, homes); d != "" {
		return cmp.Or(s, summary), d
	}
	near := suggest.DidYouMean(name, schemaNames(here))
	if isBlock && len(homes) > 0 && near != "" && suggest.DidYouMean(name, blockNames(here)) == "" {
		// A block with its body (agent { max_steps = 4 }) that is a block elsewhere is
		// misplaced, not a misspelt argument of this body (agents).
		return "Misplaced block", fmt.Sprintf("%s belongs %s, not %s.", upper(thing(name, true)), homesText(homes), in)
	}
	switch {
	case near != "" && len(homes) > 0:
		return summary, fmt.Sprintf("%s named %q is not expected %s.%s (%s belongs %s.)", what, name, in, near, thing(name, isBlock), homesText(homes))
	case near != "":
		return summary, fmt.Sprintf("%s named %q is not expected %s.%s", what, name, in, near)
	case len(homes) > 0:
		return "Misplaced " + kindWord(isBlock), fmt.Sprintf("%s belongs %s, not %s.", upper(thing(name, isBlock)), homesText(homes), in)
	}
	if other := homesOf(tree, name, !isBlock, path); len(other) > 0 {
		return summary, fmt.Sprintf("%s named %q is not expected %s; %s is %s %s.", what, name, in, name, article(kindWord(!isBlock)), homesText(other))
	}
	return "", ""
}

// kindMismatch is the summary ("" for the caller's) and detail for name written as a
// block where this body has it as an argument, or the reverse; "" when neither.
func kindMismatch(here *hcl.BodySchema, name string, isBlock bool, in string, homes []string) (summary, detail string) {
	switch {
	case isBlock && hasAttribute(here, name) && len(homes) > 0:
		return "Misplaced block", fmt.Sprintf("%s belongs %s. %s, %s is an argument (%s = …), not a block.", upper(thing(name, true)), homesText(homes), upper(in), name, name)
	case isBlock && hasAttribute(here, name):
		return "", fmt.Sprintf("%s, %s is an argument, not a block: write %s = { … } (or its value) with the equals sign.", upper(in), name, name)
	case !isBlock && hasBlock(here, name):
		return "", fmt.Sprintf("%s, %s is a block, not an argument: write %s { … } without the equals sign.", upper(in), name, name)
	}
	return "", ""
}

// thing is "a precision block" or "the argument limits".
func thing(name string, isBlock bool) string {
	if isBlock {
		return article(name) + " block"
	}
	return "the argument " + name
}

func upper(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func kindWord(isBlock bool) string {
	if isBlock {
		return "block"
	}
	return "argument"
}

// homesOf are the paths, other than the one given, whose schema has name as a block
// (isBlock) or an argument.
func homesOf(tree map[string]*hcl.BodySchema, name string, isBlock bool, except string) []string {
	var out []string
	for p, s := range tree {
		if p == except {
			continue
		}
		if isBlock && hasBlock(s, name) || !isBlock && hasAttribute(s, name) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// homesText is where the paths are: "at the top level of the plan", "in a workload
// block or a backend block".
func homesText(paths []string) string {
	parts := make([]string, len(paths))
	for i, p := range paths {
		parts[i] = bodyText(p)
	}
	if len(paths) == 1 && paths[0] == "" {
		return "at " + parts[0]
	}
	parts[0] = "in " + parts[0]
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// bodyText names the body at a path: "the top level of the plan", "a workload block",
// "a workload's slo block", "a hardware's kubernetes resources block".
func bodyText(path string) string {
	if path == "" {
		return "the top level of the plan"
	}
	parts := strings.Split(path, ".")
	if len(parts) == 1 {
		return "a " + parts[0] + " block"
	}
	return "a " + parts[0] + "'s " + strings.Join(parts[1:], " ") + " block"
}

func hasAttribute(s *hcl.BodySchema, name string) bool {
	return slices.ContainsFunc(s.Attributes, func(a hcl.AttributeSchema) bool { return a.Name == name })
}

func hasBlock(s *hcl.BodySchema, name string) bool {
	return slices.ContainsFunc(s.Blocks, func(b hcl.BlockHeaderSchema) bool { return b.Type == name })
}

func schemaNames(s *hcl.BodySchema) []string {
	var out []string
	for _, a := range s.Attributes {
		out = append(out, a.Name)
	}
	for _, b := range s.Blocks {
		out = append(out, b.Type)
	}
	return out
}

// blockNames are the block types s takes.
func blockNames(s *hcl.BodySchema) []string {
	var out []string
	for _, b := range s.Blocks {
		out = append(out, b.Type)
	}
	return out
}

// bodyPath is the path of block types from the top of the file to the innermost body
// holding r's start ("workload.slo"; "" at the top level).
func bodyPath(files map[string]*hcl.File, r hcl.Range) (string, bool) {
	f := files[r.Filename]
	if f == nil {
		return "", false
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return "", false
	}
	var path []string
	for {
		var inner *hclsyntax.Block
		for _, b := range body.Blocks {
			if b.Body != nil && b.Body.SrcRange.ContainsOffset(r.Start.Byte) {
				inner = b
			}
		}
		if inner == nil {
			return strings.Join(path, "."), true
		}
		path, body = append(path, inner.Type), inner.Body
	}
}
