package plan

import (
	"os"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/load/dataset"
)

// maxScanBytes bounds the dataset validate reads whole: a malformed row, a missing
// prompt field or a file no row of which passes the filters needs only the file, so
// validate finds it rather than apply; a larger file (a long trace) is left to apply,
// which streams it once anyway, to keep validate quick.
const maxScanBytes = 64 << 20

// scanDataset reads a dataset's file the way apply will and reports the first row it
// would stop on, on the path attribute.
func (l *loader) scanDataset(d *Dataset, path *hcl.Attribute) {
	info, err := os.Stat(d.Spec.Path)
	if path == nil || err != nil || info.IsDir() || info.Size() > maxScanBytes {
		return
	}
	if _, err := dataset.Scan(d.Spec, func(dataset.Row) error { return nil }); err != nil {
		l.errorf(path.Expr.Range().Ptr(), "Invalid dataset", "%v. apply would stop on it before sending a request: fix the file, or the dataset's format or prompt_field.", err)
	}
}
