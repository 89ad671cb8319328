package ledger

import (
	"slices"

	"github.com/planrun/planrun/internal/registry"
)

// OutputKind declares one kind of file a run writes, as a plan's output "<name>" block
// names it. report.Outputs is the one table of them, with their writers; it registers
// each declaration here, where the plan decoder checks output blocks without compiling
// the renderers.
type OutputKind struct {
	Name string
	// DefaultPath is where a block without path writes, relative to the plan's directory.
	DefaultPath string
	// RunFile is the kind's file in every run directory, written whether the plan
	// declares the kind or not; "" for none.
	RunFile string
	// Options are the arguments the block takes beside path (OptionLanguage,
	// OptionPercentiles).
	Options []string
}

// The output kinds apply appends to as the run goes, rather than rendering whole: the
// ledger (results.csv) and the raw per-request log.
const (
	LedgerOutput   = "csv"
	RequestsOutput = "jsonl"
)

// The files of a run's directory, by the names every reader and writer uses. ResultsFile
// is also the plan's own ledger, in its results directory.
const (
	ManifestFile = "manifest.json"
	ResultsFile  = "results.csv"
	RequestsFile = "requests.jsonl"
	SummaryFile  = "summary.json"
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
)

// The options an output block may take.
const (
	OptionLanguage    = "language"    // the headings' language: "en" or "zh"
	OptionPercentiles = "percentiles" // the latency percentiles shown, out of stats.Percentiles
)

// outputKinds are the registered kinds.
var outputKinds = registry.New("output kind", func(k OutputKind) string { return k.Name })

// RegisterOutput makes k known by its name to LookupOutput and OutputNames; report
// registers its table from its init function. A second kind of one name panics.
func RegisterOutput(k OutputKind) { outputKinds.Register(k) }

// LookupOutput returns the registered output kind named name.
func LookupOutput(name string) (OutputKind, bool) { return outputKinds.Lookup(name) }

// OutputNames are the registered output kinds' names, sorted; with option set, only
// those of the kinds that take it.
func OutputNames(option string) []string {
	return outputKinds.Names(func(k OutputKind) bool { return option == "" || slices.Contains(k.Options, option) })
}
