package kube

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// Kubernetes' rules for names, labels and quantities, as k8s.io/apimachinery words them
// (pkg/util/validation, pkg/api/resource), written here so that decoding a kubernetes
// block links no Kubernetes module: a plan is loaded by every planrun, the agent image's
// too, which is built without the client (-tags nokube). names_test.go holds them equal
// to apimachinery's on a table of names.

const (
	dns1123LabelFmt     = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123SubdomainFmt = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	labelKeyFmt         = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	labelValueFmt       = "(" + labelKeyFmt + ")?"
	labelKeyErrMsg      = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)

var (
	dns1123LabelRegexp     = regexp.MustCompile("^" + dns1123LabelFmt + "$")
	dns1123SubdomainRegexp = regexp.MustCompile("^" + dns1123SubdomainFmt + "$")
	labelKeyRegexp         = regexp.MustCompile("^" + labelKeyFmt + "$")
	labelValueRegexp       = regexp.MustCompile("^" + labelValueFmt + "$")
)

func regexError(msg, re string, examples ...string) string {
	var quoted []string
	for _, e := range examples {
		quoted = append(quoted, "'"+e+"', ")
	}
	return msg + " (e.g. " + strings.Join(quoted, " or ") + "regex used for validation is '" + re + "')"
}

// isDNS1123Label is validation.IsDNS1123Label: a namespace's rule.
func isDNS1123Label(value string) []string {
	var errs []string
	if len(value) > 63 {
		errs = append(errs, "must be no more than 63 characters")
	}
	switch {
	case dns1123LabelRegexp.MatchString(value):
	case dns1123SubdomainRegexp.MatchString(value):
		errs = append(errs, "must not contain dots")
	default:
		errs = append(errs, regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
			dns1123LabelFmt, "my-name", "123-abc"))
	}
	return errs
}

// isDNS1123Subdomain is validation.IsDNS1123Subdomain: a Secret's and a service
// account's rule.
func isDNS1123Subdomain(value string) []string { return dns1123Subdomain(value, "characters") }

// dns1123Subdomain is the subdomain rule, its length counted in unit: apimachinery says
// "characters" for a name and "bytes" for a label key's prefix.
func dns1123Subdomain(value, unit string) []string {
	var errs []string
	if len(value) > 253 {
		errs = append(errs, "must be no more than 253 "+unit)
	}
	if !dns1123SubdomainRegexp.MatchString(value) {
		errs = append(errs, regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
			dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

// isQualifiedName is validation.IsQualifiedName: a label key's, annotation key's and
// resource name's rule.
func isQualifiedName(value string) []string {
	var errs []string
	parts := strings.Split(value, "/")
	var name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		var prefix string
		prefix, name = parts[0], parts[1]
		if prefix == "" {
			errs = append(errs, "prefix part must be non-empty")
		} else {
			for _, msg := range dns1123Subdomain(prefix, "bytes") {
				errs = append(errs, "prefix part "+msg)
			}
		}
	default:
		return []string{"a valid label key " + regexError(labelKeyErrMsg, labelKeyFmt, "MyName", "my.name", "123-abc") +
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}
	}
	if name == "" {
		errs = append(errs, "name part must be non-empty")
	} else if len(name) > 63 {
		errs = append(errs, "name part must be no more than 63 bytes")
	}
	if !labelKeyRegexp.MatchString(name) {
		errs = append(errs, "name part "+regexError(labelKeyErrMsg, labelKeyFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// isValidLabelValue is validation.IsValidLabelValue.
func isValidLabelValue(value string) []string {
	var errs []string
	if len(value) > 63 {
		errs = append(errs, "must be no more than 63 bytes")
	}
	if !labelValueRegexp.MatchString(value) {
		errs = append(errs, regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
			labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

// The errors of resource.ParseQuantity, in its words.
var (
	errQuantityFormat = fmt.Errorf("quantities must match the regular expression '%s'", `^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`)
	errQuantitySuffix = fmt.Errorf("unable to parse quantity's suffix")
)

// parseQuantity reads a quantity as resource.ParseQuantity does ("500m", "1Gi", "1.5G",
// "2e3"), as an exact number, for the checks a plan needs: that it parses, and which of
// a request and its limit is larger. Exponents beyond ±1000 are refused (no machine has
// such a quantity of anything).
func parseQuantity(s string) (*big.Rat, error) {
	if s == "" {
		return nil, errQuantityFormat
	}
	value, suffix, err := splitQuantity(s)
	if err != nil {
		return nil, err
	}
	scale, ok := quantityScale(suffix)
	if !ok {
		return nil, errQuantitySuffix
	}
	// Digits may be missing on either side of the point ("1.", ".5", even "."): resource
	// reads what is missing as 0.
	digits, negative := strings.CutPrefix(strings.TrimPrefix(value, "+"), "-")
	whole, frac, _ := strings.Cut(digits, ".")
	n, _ := new(big.Int).SetString("0"+whole+frac, 10)
	r := new(big.Rat).SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil))
	if negative {
		r.Neg(r)
	}
	return r.Mul(r, scale), nil
}

// splitQuantity is resource's scanner: a signed decimal, then a suffix of its letters
// with an optional signed exponent.
func splitQuantity(s string) (value, suffix string, err error) {
	pos := 0
	if s[0] == '+' || s[0] == '-' {
		pos++
	}
	for pos < len(s) && s[pos] >= '0' && s[pos] <= '9' {
		pos++
	}
	if pos < len(s) && s[pos] == '.' {
		pos++
		for pos < len(s) && s[pos] >= '0' && s[pos] <= '9' {
			pos++
		}
	}
	value, suffix = s[:pos], s[pos:]
	rest := strings.TrimLeft(suffix, "eEinumkKMGTP")
	rest = strings.TrimLeft(rest[:min(1, len(rest))], "+-") + rest[min(1, len(rest)):]
	if strings.Trim(rest, "0123456789") != "" {
		return "", "", errQuantityFormat
	}
	return value, suffix, nil
}

// quantityScale is the factor a quantity's suffix means.
func quantityScale(suffix string) (*big.Rat, bool) {
	pow := func(base, exp int64) *big.Rat {
		n := new(big.Int).Exp(big.NewInt(base), big.NewInt(max(exp, -exp)), nil)
		if exp < 0 {
			return new(big.Rat).SetFrac(big.NewInt(1), n)
		}
		return new(big.Rat).SetInt(n)
	}
	if i := strings.Index("KiMiGiTiPiEi", suffix); len(suffix) == 2 && i >= 0 && i%2 == 0 {
		return pow(2, int64(10*(i/2+1))), true
	}
	if e, ok := map[string]int64{"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}[suffix]; ok {
		return pow(10, e), true
	}
	if len(suffix) > 1 && (suffix[0] == 'e' || suffix[0] == 'E') {
		if e, err := strconv.ParseInt(suffix[1:], 10, 64); err == nil && e > -1000 && e < 1000 {
			return pow(10, e), true
		}
	}
	return nil, false
}
