package ledger

import (
	"math"
	"reflect"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// filledRow sets every string, int and float field of a Row (and of its distributions)
// to a value no other field has, so a field read from the wrong place shows.
func filledRow() *Row {
	r := NewRow()
	n := 0
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !f.CanSet() {
				continue
			}
			n++
			switch f.Kind() {
			case reflect.String:
				f.SetString("s" + string(rune('A'+n%26)) + string(rune('a'+n/26)))
			case reflect.Int:
				f.SetInt(int64(100 + n))
			case reflect.Float64:
				f.SetFloat(float64(n) + 0.25)
			case reflect.Struct:
				fill(f)
			case reflect.Pointer:
				if f.Type().Elem().Kind() == reflect.Struct {
					f.Set(reflect.New(f.Type().Elem()))
					fill(f.Elem())
				}
			}
		}
	}
	fill(reflect.ValueOf(&r).Elem())
	return &r
}

func TestResultFields(t *testing.T) {
	full, empty := filledRow(), NewRow()
	seen := map[string]bool{}
	values := map[string]string{}
	for _, f := range ResultFields {
		if !hclsyntax.ValidIdentifier(f.Name) || seen[f.Name] {
			t.Errorf("%q: not a valid, unique name for result.*", f.Name)
		}
		seen[f.Name] = true
		if f.Type != cty.String && f.Type != cty.Number {
			t.Errorf("%s: type %s, want string or number", f.Name, f.Type.FriendlyName())
		}
		v := f.Value(full)
		if v.IsNull() || !v.Type().Equals(f.Type) {
			t.Errorf("%s: a measured row gives %#v, want a %s", f.Name, v, f.Type.FriendlyName())
			continue
		}
		// memory_gb is whichever memory figure the row measured: on a full row, the GPU's.
		if prev, dup := values[v.GoString()]; dup && !(f.Name == "memory_gb" && prev == "vram_peak_gb") {
			t.Errorf("%s and %s read the same value %s: one reads the wrong field", prev, f.Name, v.GoString())
		}
		values[v.GoString()] = f.Name
		// An unmeasured figure is null, never zero; names and counts are always there.
		if ev := f.Value(&empty); f.Unit != "" && !ev.IsNull() {
			t.Errorf("%s: an unmeasured row gives %#v, want null", f.Name, ev)
		}
	}
	if got := ResultValues(full); len(got) != len(ResultFields) {
		t.Errorf("ResultValues has %d names, the table %d", len(got), len(ResultFields))
	}
	for _, m := range ReferenceMetrics {
		if math.IsNaN(m.Figure(full)) || !math.IsNaN(ReferenceFigure(&empty, m.Name)) {
			t.Errorf("%s: figure %v measured, %v unmeasured", m.Name, m.Figure(full), ReferenceFigure(&empty, m.Name))
		}
	}
	if !math.IsNaN(ReferenceFigure(full, "no_such_metric")) {
		t.Error("an unknown reference metric has a figure")
	}
}
