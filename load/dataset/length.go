package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The kinds of Length.
const (
	LengthFixed     = "fixed"
	LengthUniform   = "uniform"
	LengthNormal    = "normal"
	LengthLognormal = "lognormal"
	// LengthDataset takes each request's length from its dataset row.
	LengthDataset = "dataset"
)

// Length is a request's input or output length in tokens: a fixed number, a seeded draw
// from a distribution clamped to [Min, Max], or the length its dataset row gives.
type Length struct {
	Kind string
	// Value is a fixed length.
	Value int
	// Mean and StdDev parametrise normal; Mu and Sigma lognormal (of the log of the length).
	Mean, StdDev, Mu, Sigma float64
	// Min and Max bound every draw (uniform draws between them, inclusive).
	Min, Max int
}

// Fixed is a Length of n tokens for every request.
func Fixed(n int) Length { return Length{Kind: LengthFixed, Value: n, Min: n, Max: n} }

// Check says what is wrong with the length's parameters, or nil.
func (l Length) Check() error {
	switch l.Kind {
	case LengthFixed:
		if l.Value < 1 {
			return fmt.Errorf("a length is at least 1 token, not %d", l.Value)
		}
	case LengthUniform, LengthNormal, LengthLognormal:
		if l.Min < 1 || l.Max < l.Min {
			return fmt.Errorf("%s needs 1 <= min <= max, not min %d, max %d", l.Kind, l.Min, l.Max)
		}
		if (l.Kind == LengthNormal && l.StdDev < 0) || (l.Kind == LengthLognormal && l.Sigma < 0) {
			return fmt.Errorf("%s needs a spread of at least 0", l.Kind)
		}
	case LengthDataset:
	default:
		return fmt.Errorf("unknown length kind %q", l.Kind)
	}
	return nil
}

// Draw is one length from rng; row gives a dataset length (0 when it has none, which
// then falls back to Max so a request is never empty).
func (l Length) Draw(rng *rand.Rand, row int) int {
	var x float64
	switch l.Kind {
	case LengthFixed:
		return l.Value
	case LengthDataset:
		if row > 0 {
			return row
		}
		return max(l.Max, 1)
	case LengthUniform:
		return l.Min + rng.IntN(l.Max-l.Min+1)
	case LengthNormal:
		x = l.Mean + l.StdDev*rng.NormFloat64()
	case LengthLognormal:
		x = math.Exp(l.Mu + l.Sigma*rng.NormFloat64())
	}
	return min(max(int(math.Round(x)), l.Min), l.Max)
}

// Typical is a representative length for calibration and display: the fixed value, the
// distribution's centre clamped to its bounds, or Max for dataset lengths.
func (l Length) Typical() int {
	switch l.Kind {
	case LengthFixed:
		return l.Value
	case LengthUniform:
		return (l.Min + l.Max) / 2
	case LengthNormal:
		return min(max(int(math.Round(l.Mean)), l.Min), l.Max)
	case LengthLognormal:
		return min(max(int(math.Round(math.Exp(l.Mu+l.Sigma*l.Sigma/2))), l.Min), l.Max)
	}
	return max(l.Max, 1)
}

// String is the length as a plan writes it.
func (l Length) String() string {
	switch l.Kind {
	case LengthFixed:
		return fmt.Sprint(l.Value)
	case LengthUniform:
		return fmt.Sprintf("uniform(%d, %d)", l.Min, l.Max)
	case LengthNormal:
		return fmt.Sprintf("normal(%g, %g, %d, %d)", l.Mean, l.StdDev, l.Min, l.Max)
	case LengthLognormal:
		return fmt.Sprintf("lognormal(%g, %g, %d, %d)", l.Mu, l.Sigma, l.Min, l.Max)
	}
	return l.Kind
}

// Lengths draws a workload's request lengths reproducibly: one stream per seed.
type Lengths struct{ rng *rand.Rand }

// NewLengths starts the draws for a seed.
func NewLengths(seed int64) *Lengths {
	return &Lengths{rng: rand.New(rand.NewPCG(uint64(seed), 0x6c656e67))}
}

// Next draws the next length of l (row: the dataset's length for this request, or 0).
func (s *Lengths) Next(l Length, row int) int { return l.Draw(s.rng, row) }
