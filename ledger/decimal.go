package ledger

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// shiftPoint moves the decimal point of the number text s by p places (right for p > 0),
// in the text itself: nothing is rounded, so shifting back by -p gives the same digits.
// s is a JSON number (sign, digits, an optional fraction and exponent); the result is
// plain decimal text without an exponent.
func shiftPoint(s string, p int) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil {
			return sign + s // not a number: left for the parser to refuse
		}
		exp, s = e, s[:i]
	}
	whole, frac, _ := strings.Cut(s, ".")
	digits := whole + frac
	point := len(whole) + exp + p // where the point falls in digits
	trimmed := strings.TrimLeft(digits, "0")
	point -= len(digits) - len(trimmed)
	digits = strings.TrimRight(trimmed, "0")
	if digits == "" {
		return "0"
	}
	var out string
	switch {
	case point <= 0:
		out = "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		out = digits + strings.Repeat("0", point-len(digits))
	default:
		out = digits[:point] + "." + digits[point:]
	}
	return sign + out
}

// figure is v for JSON in a unit 10^p times the Row's (p = 3: seconds as ms), nil when
// not measured. The point is moved in v's shortest text rather than v multiplied, so
// unfigure gives v back bit for bit: 0.0100807651 s × 1000 ÷ 1000 is
// 0.010080765100000002 in floating point.
func figure(v float64, p int) *json.Number {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	n := json.Number(shiftPoint(strconv.FormatFloat(v, 'g', -1, 64), p))
	return &n
}

// unfigure reads a figure back into the Row's unit: NaN when null or not a number.
func unfigure(n *json.Number, p int) float64 {
	if n == nil {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(shiftPoint(string(*n), -p), 64)
	if err != nil {
		return math.NaN()
	}
	return v
}
