package plan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"
)

// Type mistakes a user makes are mostly of a few shapes: a unit written into a number
// ("500ms" where ttft_s asks for seconds), one value where a list is asked (gpus = 0),
// a list where a map is asked (headers written as "Name: value" lines). typeHint says
// what to write instead, so the error is more than the converter's "a number is required".

// numberWithUnit is a number followed by a unit word, as in "500ms", "80 GB" or "95%".
var numberWithUnit = regexp.MustCompile(`^\s*(-?[0-9]+(?:\.[0-9]+)?)\s*([A-Za-zµ%]*)\s*$`)

// nameUnits are the units an attribute's name ends in, and their words.
var nameUnits = []struct{ suffix, unit, words string }{
	{"_ms", "ms", "milliseconds"},
	{"_s", "s", "seconds"},
	{"_gb", "gb", "GB"},
	{"_pct", "%", "percent"},
}

// typeHint is a sentence on how to write v as want for the attribute name, or "".
func typeHint(name string, v cty.Value, want cty.Type) string {
	if !v.IsKnown() || v.IsNull() {
		return ""
	}
	got := v.Type()
	switch {
	case want == cty.Number && got == cty.String:
		return numberHint(name, v.AsString())
	case (want.IsListType() || want.IsSetType()) && got.IsPrimitiveType():
		return listHint(name, v, want.ElementType())
	case (want.IsMapType() || want.IsObjectType()) && (got.IsTupleType() || got.IsListType()):
		return mapHint(name, v)
	}
	return ""
}

// numberHint explains a string given for a number: quotes, or a unit the name already says.
func numberHint(name, s string) string {
	m := numberWithUnit.FindStringSubmatch(s)
	if m == nil {
		return fmt.Sprintf("%s is a number, written without quotes.", name)
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	given := strings.ToLower(m[2])
	for _, u := range nameUnits {
		if !strings.HasSuffix(name, u.suffix) {
			continue
		}
		want := n
		if u.unit == "s" || u.unit == "ms" {
			if given != "" {
				gu, ok := durationUnits[given]
				if !ok {
					break
				}
				d, err := time.ParseDuration(m[1] + gu)
				if err != nil {
					break
				}
				want = d.Seconds()
				if u.unit == "ms" {
					want = float64(d) / float64(time.Millisecond)
				}
			}
		}
		return fmt.Sprintf("%s is a number of %s, without quotes or a unit (the name says the unit): did you mean %s = %s?", name, u.words, name, strconv.FormatFloat(want, 'g', -1, 64))
	}
	if given == "" {
		return fmt.Sprintf("%s is a number, without quotes: did you mean %s = %s?", name, name, m[1])
	}
	return fmt.Sprintf("%s is a number, without quotes or a unit: did you mean %s = %s?", name, name, m[1])
}

// listHint explains one value given where a list is asked: brackets around it, or a
// comma-separated string split into the list it stands for.
func listHint(name string, v cty.Value, elem cty.Type) string {
	var items []string
	switch v.Type() {
	case cty.String:
		sep := ","
		if !strings.Contains(v.AsString(), ",") && elem == cty.String {
			sep = " " // a command line: no shell runs it, each word is its own string
		}
		for _, part := range strings.Split(v.AsString(), sep) {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			if _, err := strconv.ParseFloat(part, 64); err == nil && elem == cty.Number {
				items = append(items, part)
			} else {
				items = append(items, strconv.Quote(part))
			}
		}
	case cty.Number:
		items = []string{v.AsBigFloat().Text('g', -1)}
	case cty.Bool:
		items = []string{fmt.Sprint(v.True())}
	}
	if len(items) == 0 {
		return ""
	}
	return fmt.Sprintf("%s is a list, in square brackets even for one value: did you mean %s = [%s]?", name, name, strings.Join(items, ", "))
}

// mapHint explains a list given where a map is asked; "Name: value" items (as HTTP
// headers are written) are turned into the map's keys and values.
func mapHint(name string, v cty.Value) string {
	var pairs []string
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if !ev.IsKnown() || ev.IsNull() || ev.Type() != cty.String {
			pairs = nil
			break
		}
		k, val, ok := strings.Cut(ev.AsString(), ":")
		if !ok {
			k, val, ok = strings.Cut(ev.AsString(), "=")
		}
		if !ok {
			pairs = nil
			break
		}
		pairs = append(pairs, fmt.Sprintf("%q = %q", strings.TrimSpace(k), strings.TrimSpace(val)))
	}
	if len(pairs) == 0 {
		return fmt.Sprintf("%s is a map, in braces: %s = { key = \"value\" }, not a list.", name, name)
	}
	return fmt.Sprintf("%s is a map, in braces, not a list: did you mean %s = { %s }?", name, name, strings.Join(pairs, ", "))
}

// typeAt is the type an element at path p of a value of type ty must have, and
// whether the path leads into ty.
func typeAt(ty cty.Type, p cty.Path) (cty.Type, bool) {
	for _, step := range p {
		switch s := step.(type) {
		case cty.IndexStep:
			if !ty.IsListType() && !ty.IsMapType() && !ty.IsSetType() {
				return cty.NilType, false
			}
			ty = ty.ElementType()
		case cty.GetAttrStep:
			if !ty.IsObjectType() || !ty.HasAttribute(s.Name) {
				return cty.NilType, false
			}
			ty = ty.AttributeType(s.Name)
		}
	}
	return ty, true
}

// elementHint is typeHint, led by a space, for the element at path p of v (the whole
// value when p is empty); "" when there is none.
func elementHint(name string, v cty.Value, ty cty.Type, p cty.Path) string {
	ev, err := p.Apply(v)
	if err != nil {
		return ""
	}
	et, ok := typeAt(ty, p)
	if !ok {
		return ""
	}
	if len(p) > 0 && et != cty.Number {
		return "" // an element's list or map shape is clear from the message
	}
	if h := typeHint(name, ev, et); h != "" {
		return " " + h
	}
	return ""
}
