package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/load/quality"
)

// maxScanBytes bounds the dataset validate reads whole: a malformed row, a missing
// prompt field or a file no row of which passes the filters needs only the file, so
// validate finds it rather than apply; a larger file (a long trace) is left to apply,
// which streams it once anyway, to keep validate quick.
const maxScanBytes = 64 << 20

// scanDataset reads a dataset's file the way apply will and reports the first row it
// would stop on, on the path attribute.
func scanDataset(d *Dataset, path *hcl.Attribute) hcl.Diagnostics {
	info, err := os.Stat(d.Spec.Path)
	if path == nil || err != nil || info.IsDir() || info.Size() > maxScanBytes {
		return nil
	}
	if _, err := dataset.Scan(d.Spec, func(dataset.Row) error { return nil }); err != nil {
		var r report
		r.errorf(path.Expr.Range().Ptr(), "Invalid dataset", "%v. apply would stop on it before sending a request: fix the file, or the dataset's format or prompt_field.%s", err, promptFieldHint(d.Spec, err))
		return r.diags
	}
	return nil
}

// promptFieldHint names the text fields a JSONL file's first row has when no row has
// the prompt field: the file is fine, the plan names the wrong field.
func promptFieldHint(spec dataset.Spec, err error) string {
	if spec.Format != dataset.FormatJSONL || !strings.Contains(err.Error(), "no non-empty string field") {
		return ""
	}
	f, oerr := os.Open(spec.Path)
	if oerr != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	var row map[string]any
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			if json.Unmarshal(line, &row) != nil {
				return ""
			}
			break
		}
	}
	var text []string
	for k, v := range row {
		if _, ok := v.(string); ok {
			text = append(text, k)
		}
	}
	slices.Sort(text)
	switch len(text) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(" Its rows' text field is %q: did you mean prompt_field = %q?", text[0], text[0])
	}
	return fmt.Sprintf(" Its rows' text fields are %s: set prompt_field to the one that holds the prompt.", quoteList(text))
}

// scanAccuracy reads a quality block's accuracy file as the quality phase will (up to
// maxScanBytes) and reports the first line it would stop on; nil when there is none.
func scanAccuracy(acc *QualityAccuracy, path *hcl.Attribute) *hcl.Diagnostic {
	info, err := os.Stat(acc.Path)
	if path == nil || err != nil || info.IsDir() || info.Size() > maxScanBytes {
		return nil
	}
	if _, err := quality.ReadItems(acc.Path, acc.Scorer); err != nil {
		return errorAt(path, "Invalid accuracy file", fmt.Sprintf("%v. The quality phase would stop on it: each line is {\"prompt\": \"…\", \"answer\": \"…\"} (with \"choices\" for the choice scorer).", err))
	}
	return nil
}
