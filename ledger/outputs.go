package ledger

import "slices"

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
	LedgerOutput  = "csv"
	SamplesOutput = "jsonl"
)

// The options an output block may take.
const (
	OptionLanguage    = "language"    // the headings' language: "en" or "zh"
	OptionPercentiles = "percentiles" // the latency percentiles shown, out of stats.Percentiles
)

// outputKinds are the registered kinds, in registration order.
var outputKinds []OutputKind

// RegisterOutput makes k known by its name to LookupOutput and OutputNames; report
// registers its table from its init function. A second kind of one name panics.
func RegisterOutput(k OutputKind) {
	if _, dup := LookupOutput(k.Name); dup {
		panic("ledger: output kind " + k.Name + " registered twice")
	}
	outputKinds = append(outputKinds, k)
}

// LookupOutput returns the registered output kind named name.
func LookupOutput(name string) (OutputKind, bool) {
	for _, k := range outputKinds {
		if k.Name == name {
			return k, true
		}
	}
	return OutputKind{}, false
}

// OutputNames are the registered output kinds' names, sorted; with option set, only
// those of the kinds that take it.
func OutputNames(option string) []string {
	var names []string
	for _, k := range outputKinds {
		if option == "" || slices.Contains(k.Options, option) {
			names = append(names, k.Name)
		}
	}
	slices.Sort(names)
	return names
}
