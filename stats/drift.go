package stats

import (
	"math"
	"slices"

	"github.com/planrun/planrun/backends"
)

// A cell's output drift against a reference, position by position along the
// reference's greedy continuation of a prompt: whether the cell's most likely token is
// the reference's, where that first fails, and how far apart the two top-k
// distributions are.

// minOther keeps the lumped tail's log finite where one side returned (nearly) all of
// its mass in its top-k and the other did not.
const minOther = 1e-12

// TopKL is KL(ref ‖ cell) in nats over two top-k lists of one position, an estimate of
// the divergence of the full distributions: the tokens both lists hold keep their own
// probabilities, and every other token's mass is lumped into one "other" bucket on each
// side (1 − the kept tokens' sum). Both distributions are coarse-grained on one
// partition, so the estimate never exceeds the full KL; it falls short by what the
// lumped tokens would add. A side whose kept mass rounds past 1 gets no other bucket.
//
// Entries that name one token (Ollama writes every byte token that is no UTF-8 of its
// own as "\ufffd", so several tokens share that text) are one bucket, their
// probabilities summed: a coarser partition, so still never above the full KL.
func TopKL(ref, cell []backends.LogProb) float64 {
	ref, cell = mergeSame(ref), mergeSame(cell)
	var kl, pKept, qKept float64
	for _, r := range ref {
		i := slices.IndexFunc(cell, r.SameToken)
		if i < 0 {
			continue
		}
		p, q := math.Exp(r.LogProb), math.Exp(cell[i].LogProb)
		pKept += p
		qKept += q
		kl += p * (r.LogProb - cell[i].LogProb)
	}
	pOther, qOther := 1-pKept, 1-qKept
	if pOther > minOther {
		kl += pOther * math.Log(pOther/math.Max(qOther, minOther))
	}
	return math.Max(kl, 0) // rounding can leave a tiny negative where the two agree
}

// mergeSame sums the probabilities of entries that name the same token; a list
// without such entries is returned as it is.
func mergeSame(top []backends.LogProb) []backends.LogProb {
	dup := false
	for i := range top {
		for j := range i {
			dup = dup || top[i].SameToken(top[j])
		}
	}
	if !dup {
		return top
	}
	out := make([]backends.LogProb, 0, len(top))
	for _, t := range top {
		if i := slices.IndexFunc(out, t.SameToken); i >= 0 {
			out[i].LogProb = math.Log(math.Exp(out[i].LogProb) + math.Exp(t.LogProb))
			continue
		}
		out = append(out, t)
	}
	return out
}

// Top1 is the most likely token of a top-k list (the first of equals), and false for
// an empty list.
func Top1(top []backends.LogProb) (backends.LogProb, bool) {
	if len(top) == 0 {
		return backends.LogProb{}, false
	}
	best := top[0]
	for _, t := range top[1:] {
		if t.LogProb > best.LogProb {
			best = t
		}
	}
	return best, true
}

// PromptDrift is one prompt's comparison along the reference's path.
type PromptDrift struct {
	// Positions is the path's length compared; Same the positions where the cell's top
	// token was the reference's top token.
	Positions, Same int
	// FirstDivergence is the 1-based position of the first that was not; Positions + 1
	// when every one was.
	FirstDivergence int
	// KL is the mean of TopKL over the positions where both sides returned a top-k.
	KL float64
	// LogProbDelta is the mean over positions of the cell's log-probability of the
	// reference's token less the reference's own: exact when both were read
	// teacher-forced (the token's own log-probability, not a top-k's); NaN otherwise.
	LogProbDelta float64
}

// ComparePrompt compares the cell's distributions along the reference's path with the
// reference's own. ref[i] is the reference's token at position i with its top-k (whose
// most likely token the cell's is compared with); cell[i]
// is the cell's top-k at the same position (after the same prefix). When forced is set,
// cell[i].LogProb is the cell's log-probability of ref[i]'s token, read teacher-forced,
// as ref[i].LogProb is the reference's; LogProbDelta is then their mean difference. The
// shorter of the two lengths is compared.
func ComparePrompt(ref, cell []backends.TokenLogProbs, forced bool) PromptDrift {
	n := min(len(ref), len(cell))
	d := PromptDrift{Positions: n, FirstDivergence: n + 1, KL: math.NaN(), LogProbDelta: math.NaN()}
	var klSum, lpSum float64
	kls := 0
	for i := range n {
		// The reference's top token read as the cell's is (teacher-forced or generated),
		// so the reference against itself agrees even where prefill and decoding round a
		// near-tie differently; its path token where it returned no top-k.
		want, ok := Top1(ref[i].Top)
		if !ok {
			want = ref[i].LogProb
		}
		if top, ok := Top1(cell[i].Top); ok && top.SameToken(want) {
			d.Same++
		} else if d.FirstDivergence > n {
			d.FirstDivergence = i + 1
		}
		if len(ref[i].Top) > 0 && len(cell[i].Top) > 0 {
			klSum += TopKL(ref[i].Top, cell[i].Top)
			kls++
		}
		lpSum += cell[i].LogProb.LogProb - ref[i].LogProb.LogProb
	}
	if kls > 0 {
		d.KL = klSum / float64(kls)
	}
	if forced && n > 0 {
		d.LogProbDelta = lpSum / float64(n)
	}
	return d
}

// Drift is a cell's drift over a prompt set: each figure with its interval over prompts
// (prompts are the independent draws; positions within a prompt are not).
type Drift struct {
	Prompts int
	// SameTop1Pct is the mean over prompts of each prompt's % of positions with the same
	// top token, with the t interval of those rates (clamped to 0–100).
	SameTop1Pct float64
	SameTop1CI  Interval
	// FirstDivergence is the median prompt's first divergence, its interval
	// distribution-free.
	FirstDivergence   float64
	FirstDivergenceCI Interval
	// KL and LogProbDelta are means over prompts of each prompt's mean, with t
	// intervals (KL's lower end clamped to 0); NaN where no prompt had one.
	KL, LogProbDelta     float64
	KLCI, LogProbDeltaCI Interval
}

// SummarizeDrift pools the prompts' comparisons at confidence conf. Prompts with no
// position compared are left out.
func SummarizeDrift(prompts []PromptDrift, conf float64) Drift {
	var rates, firsts, kls, lps []float64
	for _, p := range prompts {
		if p.Positions == 0 {
			continue
		}
		rates = append(rates, 100*float64(p.Same)/float64(p.Positions))
		firsts = append(firsts, float64(p.FirstDivergence))
		if !math.IsNaN(p.KL) {
			kls = append(kls, p.KL)
		}
		if !math.IsNaN(p.LogProbDelta) {
			lps = append(lps, p.LogProbDelta)
		}
	}
	d := Drift{Prompts: len(rates)}
	d.SameTop1Pct, d.SameTop1CI = MeanWithInterval(rates, conf)
	d.SameTop1CI.Lo, d.SameTop1CI.Hi = math.Max(d.SameTop1CI.Lo, 0), math.Min(d.SameTop1CI.Hi, 100)
	slices.Sort(firsts)
	d.FirstDivergence, d.FirstDivergenceCI = math.NaN(), QuantileInterval(firsts, 0.5, conf)
	if len(firsts) > 0 {
		d.FirstDivergence = median(firsts)
	}
	d.KL, d.KLCI = MeanWithInterval(kls, conf)
	d.KLCI.Lo = math.Max(d.KLCI.Lo, 0)
	d.LogProbDelta, d.LogProbDeltaCI = MeanWithInterval(lps, conf)
	return d
}

// MeanWithInterval is the mean of values and its t interval at confidence conf (NaN and
// unbounded for none; unbounded, needing 2, for one value): mean ± t(n−1)·s/√n with s
// the sample standard deviation.
func MeanWithInterval(values []float64, conf float64) (float64, Interval) {
	n := len(values)
	if n == 0 {
		return math.NaN(), Unbounded(2)
	}
	var sum float64
	for _, v := range values {
		sum += v
	}
	mean := sum / float64(n)
	var ss float64
	for _, v := range values {
		ss += (v - mean) * (v - mean)
	}
	s := math.NaN()
	if n > 1 {
		s = math.Sqrt(ss / float64(n-1))
	}
	return mean, meanInterval(n, mean, s, conf)
}
