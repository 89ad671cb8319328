//go:build !nokube

package kube

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The rules a kubernetes block is checked with (names.go, written without apimachinery
// so the decoder links no Kubernetes module) say what apimachinery's say, word for
// word, on names that pass and names that break each part of them.
func TestNamesAsApimachinery(t *testing.T) {
	long := strings.Repeat("a", 64)
	names := []string{"", "bench", "Bench_Team", "runner!", "a.b", "a-b", "-a", "a-", "123-abc", long, long[:63],
		strings.Repeat("a.", 127) + "a", "planrun-keys", "Bad Secret", "nvidia.com/gpu", "nvidia.com/gpu.product", "gpu type",
		"/x", "x/", "a/b/c", "Example.com/x", "example.com/" + long, "my_value", "_x", "x_", "x.y_z-w", "ä", "team"}
	for _, tc := range []struct {
		name       string
		ours, them func(string) []string
	}{
		{"IsDNS1123Label", isDNS1123Label, validation.IsDNS1123Label},
		{"IsDNS1123Subdomain", isDNS1123Subdomain, validation.IsDNS1123Subdomain},
		{"IsQualifiedName", isQualifiedName, validation.IsQualifiedName},
		{"IsValidLabelValue", isValidLabelValue, validation.IsValidLabelValue},
	} {
		for _, n := range names {
			if ours, them := strings.Join(tc.ours(n), "; "), strings.Join(tc.them(n), "; "); ours != them {
				t.Errorf("%s(%q):\n ours %q\n them %q", tc.name, n, ours, them)
			}
		}
	}
}

// A quantity parses, or fails with the same error, as resource.ParseQuantity has it, and
// two quantities compare as resource's do.
func TestQuantitiesAsApimachinery(t *testing.T) {
	qs := []string{"", "0", "1", "2", "500m", "0.5", ".5", "1.", ".", "+", "-1", "+1.5", "1Gi", "1.5Gi", "1Ki", "1Mi", "8Gi",
		"1G", "1.5G", "2e3", "2E3", "2e-3", "2e+3", "1E", "1e", "1k", "1K", "1Ki5", "lots", "1 Gi", "1.2.3", "12u", "3n",
		"1Pi", "1Ei", "1P", "100M", "0.1m", "1e18", "9", "1i", "1mi", "00", "0.000"}
	for _, q := range qs {
		ours, oerr := parseQuantity(q)
		them, terr := resource.ParseQuantity(q)
		if (oerr == nil) != (terr == nil) || oerr != nil && oerr.Error() != terr.Error() {
			t.Errorf("parse %q: ours %v, them %v", q, oerr, terr)
			continue
		}
		if oerr != nil {
			continue
		}
		for _, p := range qs {
			ours2, err1 := parseQuantity(p)
			them2, err2 := resource.ParseQuantity(p)
			if err1 != nil || err2 != nil {
				continue
			}
			if a, b := ours.Cmp(ours2), them.Cmp(them2); a != b {
				t.Errorf("%q against %q: ours %d, them %d", q, p, a, b)
			}
		}
	}
}
