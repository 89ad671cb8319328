package ledger

import "math"

// Memory is the memory the server's processes held during the level, for a model on
// the CPU where NVML has no figure, beside what the server itself says and the seed's
// estimate. Figures are GB (10⁹ bytes), NaN when not measured; MemSource says where the
// figure came from, or why there is none.
type Memory struct {
	// MemBaselineGB and MemPeakGB are the RSS sum over the server's process tree before
	// load and its peak during load.
	MemBaselineGB, MemPeakGB float64
	// MemPSSPeakGB is the PSS sum's peak (smaps_rollup), which splits pages shared with
	// any process, inside the tree or not; NaN where the kernel has no smaps_rollup.
	MemPSSPeakGB float64
	MemSource    string
	// ServerSizeGB is Ollama's /api/ps size for the model (its whole footprint, CPU and GPU).
	ServerSizeGB float64
	// KVCacheGB is the KV cache the server set aside: vLLM's, from its start-up log.
	KVCacheGB float64
	// MemEstimateDiffPct is (measured − estimate) / estimate in %, measured being the GPU
	// figure when there is one, else the process tree's peak.
	MemEstimateDiffPct float64
	// MemJobBaselineGB and MemJobPeakGB are a Slurm cell's whole job as sstat read it on
	// the node: its RSS when the level began, and its MaxRSS (jobacct_gather's peak of
	// the batch step: planrun's client, the servers it started, since the job began) at
	// the level's end. MemJobSource says so, and whether the peak fell in this level.
	MemJobBaselineGB, MemJobPeakGB float64
	MemJobSource                   string
}

// Served is what the cell's server really ran on and served, read from the
// machine and the server rather than the plan.
type Served struct {
	// CPU is the processor model; CPUsAllowed the server's Cpus_allowed_list.
	CPU, CPUsAllowed string
	// QuantizationSource says where the row's quantization was read ("ollama /api/show
	// details.quantization_level"), or that the server does not state it.
	QuantizationSource string
	// QuantizationServed is the quantization the server says it serves ("F16",
	// "bfloat16"), empty when it does not state it. The row's Quantization stays the
	// plan's label, which compare pairs rows by; the tables show this one where the plan
	// declares none (QuantShown).
	QuantizationServed string
	// EngineBuild is what the server's engine said, as it started, its build uses: the
	// CPU extensions (and GPU backends) it reports (servers.EngineBuild's String), empty
	// for a server planrun did not start or whose log does not say.
	EngineBuild string
}

// QuantShown is the quantization the tables show: the plan's, else what the server
// serves.
func (r Row) QuantShown() string {
	if r.Quantization != "" {
		return r.Quantization
	}
	return r.QuantizationServed
}

func newMemory() Memory {
	nan := math.NaN()
	return Memory{MemBaselineGB: nan, MemPeakGB: nan, MemPSSPeakGB: nan, ServerSizeGB: nan, KVCacheGB: nan, MemEstimateDiffPct: nan,
		MemJobBaselineGB: nan, MemJobPeakGB: nan}
}

// memoryColumns are the memory and environment columns, appended after the earlier
// formats' columns so older ledgers upgrade in place.
func memoryColumns() []column {
	return []column{
		floatCol("mem_baseline_gb", 1, func(r *Row) *float64 { return &r.MemBaselineGB }),
		floatCol("mem_peak_gb", 1, func(r *Row) *float64 { return &r.MemPeakGB }),
		floatCol("mem_pss_peak_gb", 1, func(r *Row) *float64 { return &r.MemPSSPeakGB }),
		strCol("mem_source", func(r *Row) *string { return &r.MemSource }),
		floatCol("server_size_gb", 1, func(r *Row) *float64 { return &r.ServerSizeGB }),
		floatCol("kv_cache_gb", 1, func(r *Row) *float64 { return &r.KVCacheGB }),
		floatCol("mem_estimate_diff_pct", 1, func(r *Row) *float64 { return &r.MemEstimateDiffPct }),
		strCol("cpu", func(r *Row) *string { return &r.CPU }),
		strCol("cpus_allowed", func(r *Row) *string { return &r.CPUsAllowed }),
		strCol("quantization_source", func(r *Row) *string { return &r.QuantizationSource }),
	}
}

// jobMemoryColumns are a Slurm job's memory, appended after quantization_served so
// older ledgers upgrade in place.
func jobMemoryColumns() []column {
	return []column{
		floatCol("mem_job_baseline_gb", 1, func(r *Row) *float64 { return &r.MemJobBaselineGB }),
		floatCol("mem_job_peak_gb", 1, func(r *Row) *float64 { return &r.MemJobPeakGB }),
		strCol("mem_job_source", func(r *Row) *string { return &r.MemJobSource }),
	}
}

// memoryFields are result.* names for the memory the tables show, whichever measured it.
var memoryFields = []ResultField{
	numField("memory_gb", "GB", "the memory the seed table shows: the GPU's peak (NVML, DCGM) where measured, else the peak RSS of the server's processes, else a Slurm job's MaxRSS", 1,
		func(r *Row) float64 { gb, _, _ := r.MemoryGB(); return gb }),
}

// MemoryGB is the row's memory figure as the seed's table shows it, and its source: the
// GPU's through NVML (or a DCGM exporter) when there is one, else the server's process
// tree, else a Slurm job's MaxRSS (the whole job, planrun's client included); ok is false
// when none was read, and source then says why.
func (r Row) MemoryGB() (gb float64, source string, ok bool) {
	if !math.IsNaN(r.VRAMPeakGB) {
		return r.VRAMPeakGB, r.VRAMSource, true
	}
	if !math.IsNaN(r.MemPeakGB) {
		return r.MemPeakGB, r.MemSource, true
	}
	if !math.IsNaN(r.MemJobPeakGB) {
		return r.MemJobPeakGB, r.MemJobSource, true
	}
	why := r.MemSource
	if why == "" {
		why = r.VRAMSource
	}
	return math.NaN(), why, false
}
