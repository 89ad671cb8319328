package ledger

import (
	"encoding/json"
	"math"
	"testing"
)

// JSONFloat writes a figure in the fewest digits that read back exactly, and a figure
// that was not measured (NaN) or is infinite as null.
func TestJSONFloat(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0.25, `{"a":0.25}`},
		{12, `{"a":12}`},
		{-1.5, `{"a":-1.5}`},
		{0.1, `{"a":0.1}`},
		{math.NaN(), `{"a":null}`},
		{math.Inf(1), `{"a":null}`},
		{math.Inf(-1), `{"a":null}`},
	} {
		b, err := json.Marshal(struct {
			A JSONFloat `json:"a"`
		}{JSONFloat(c.in)})
		if err != nil || string(b) != c.want {
			t.Errorf("JSONFloat(%v) = %s, %v; want %s", c.in, b, err, c.want)
		}
	}
}
