package plan

import (
	"fmt"
	"regexp"
	"strings"
)

// SelectCells keeps the cells whose id matches any of only (all cells when only is
// empty) and none of except. In a glob, * matches any run of characters, "/" included,
// so "qwen/*" selects a whole matrix; ? matches one character. A pattern that matches
// no cell is an error: it is almost always a typo.
func SelectCells(cells []*Cell, only, except []string) ([]*Cell, error) {
	onlyRE, err := compileGlobs(only)
	if err != nil {
		return nil, err
	}
	exceptRE, err := compileGlobs(except)
	if err != nil {
		return nil, err
	}
	used := make([]bool, len(only)+len(except))
	var out []*Cell
	for _, c := range cells {
		keep := len(only) == 0
		for i, re := range onlyRE {
			if re.MatchString(c.ID) {
				keep, used[i] = true, true
			}
		}
		for i, re := range exceptRE {
			if re.MatchString(c.ID) {
				keep, used[len(only)+i] = false, true
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	for i, pat := range append(append([]string(nil), only...), except...) {
		if !used[i] {
			flag := "-only"
			if i >= len(only) {
				flag = "-except"
			}
			return nil, fmt.Errorf("%s %q matches no cell; run 'planrun plan' to list the cell ids", flag, pat)
		}
	}
	return out, nil
}

func compileGlobs(globs []string) ([]*regexp.Regexp, error) {
	res := make([]*regexp.Regexp, len(globs))
	for i, g := range globs {
		if g == "" {
			return nil, fmt.Errorf("empty cell glob")
		}
		var b strings.Builder
		b.WriteString("^")
		for _, r := range g {
			switch r {
			case '*':
				b.WriteString(".*")
			case '?':
				b.WriteString(".")
			default:
				b.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		b.WriteString("$")
		re, err := regexp.Compile(b.String())
		if err != nil {
			return nil, fmt.Errorf("invalid cell glob %q: %v", g, err)
		}
		res[i] = re
	}
	return res, nil
}

// MatchCellGlobs reports whether a cell id matches any of globs, read as -only reads
// them (* spans "/"); a glob that does not compile matches nothing. history's -cell
// selects with it.
func MatchCellGlobs(globs []string, id string) bool {
	res, err := compileGlobs(globs)
	if err != nil {
		return false
	}
	for _, re := range res {
		if re.MatchString(id) {
			return true
		}
	}
	return false
}
