package ledger

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
)

// Ledger is the CSV results file, appended across runs, by several runs at once when
// they share it (every example without an output "csv" block shares one). The file is
// opened in append mode and every Append holds an advisory lock (flock) on it while it
// looks at the file and writes one record, with a single write, fsynced before it
// returns: concurrent runs append whole records, none lost. A kill can still cut the
// write in flight (Linux stops a regular-file write between pages when SIGKILL
// arrives), leaving a torn last record that was never acknowledged: readers skip it
// (wholeRecords), and the next writer, holding the lock, cuts it off.
type Ledger struct {
	mu   sync.Mutex
	f    *os.File
	path string
	// whole is an offset known to end a whole record of f (after this Ledger's last
	// write); what other runs appended since is checked from there, not from the start.
	// 0 when f was just opened: the header is checked first.
	whole int64
}

// OpenLedger opens path for appending, creating it (and writing the header) when it is
// new or empty. A ledger written by an earlier planrun, whose columns are all known but
// fewer or in another order, is rewritten in this version's columns first (every value
// kept, new columns empty); a file with a column this version does not know is refused:
// mixing formats in one ledger would misalign every later row.
func OpenLedger(path string) (*Ledger, error) {
	l := &Ledger{path: path}
	if err := l.open(); err != nil {
		return nil, err
	}
	if err := l.locked(nil); err != nil {
		l.f.Close()
		return nil, err
	}
	return l, nil
}

func (l *Ledger) open() error {
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open ledger: %w", err)
	}
	l.f, l.whole = f, 0
	return nil
}

// locked takes the lock, brings the file to a state this version appends to (header
// written, checked or upgraded, a torn last record cut off), appends rec unless it is
// nil, and unlocks. Another run may have created, appended to, repaired or upgraded
// the file since it was opened, so each of these is decided under the lock.
func (l *Ledger) locked(rec []string) error {
	for {
		if err := lockFile(l.f); err != nil {
			return fmt.Errorf("lock ledger %s: %w", l.path, err)
		}
		again, err := l.settle()
		if err == nil && !again && rec != nil {
			err = l.write(rec)
		}
		unlockFile(l.f)
		if err != nil || !again {
			return err
		}
		// The path names another file now (an upgrade renamed a new one over it, or the
		// ledger was moved away): append to what the path names.
		l.f.Close()
		if err := l.open(); err != nil {
			return err
		}
	}
}

// settle runs under the lock. again is true when f is no longer the file at the path
// (an upgrade, by this run or another, replaced it).
func (l *Ledger) settle() (again bool, err error) {
	fi, err := l.f.Stat()
	if err != nil {
		return false, fmt.Errorf("read ledger %s: %w", l.path, err)
	}
	if pi, err := os.Stat(l.path); err != nil || !os.SameFile(fi, pi) {
		return true, nil
	}
	size := fi.Size()
	if size < l.whole { // cut by hand: check it all again
		l.whole = 0
	}
	if size == 0 {
		return false, l.write(Header())
	}
	if size == l.whole {
		return false, nil // nothing appended since this run's last record
	}
	return l.settleAppended(size)
}

// settleAppended reads what the file holds past this run's last whole record, up to
// size: it writes a header a kill cut short again, checks (or upgrades) the header of a
// file read from its start, and cuts a torn last record. again is as settle's.
func (l *Ledger) settleAppended(size int64) (again bool, err error) {
	data := make([]byte, size-l.whole)
	if _, err := l.f.ReadAt(data, l.whole); err != nil {
		return false, fmt.Errorf("read ledger %s: %w", l.path, err)
	}
	if l.whole == 0 && bytes.HasPrefix(headerLine(), data) {
		// A header a kill cut short is no header: write it again.
		if err := l.f.Truncate(0); err != nil {
			return false, fmt.Errorf("repair torn header of %s: %w", l.path, err)
		}
		return false, l.write(Header())
	}
	if l.whole == 0 {
		if upgraded, err := l.checkHeader(data); upgraded || err != nil {
			return upgraded, err
		}
	}
	whole, torn := wholeRecords(data)
	if torn {
		if err := l.f.Truncate(l.whole + int64(len(whole))); err != nil {
			return false, fmt.Errorf("repair torn last record of %s: %w", l.path, err)
		}
	}
	l.whole += int64(len(whole))
	return false, nil
}

// headerLine is the header as the ledger holds it.
func headerLine() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(Header())
	w.Flush()
	return b.Bytes()
}

// checkHeader refuses a ledger of unknown columns and upgrades one of an earlier
// version's (upgraded: the path now names the rewritten file).
func (l *Ledger) checkHeader(data []byte) (upgraded bool, err error) {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	got, err := csv.NewReader(bytes.NewReader(first)).Read()
	if err == nil && slices.Equal(got, Header()) {
		return false, nil
	}
	if _, ok := headerIndex(got); err != nil || !ok {
		return false, fmt.Errorf("ledger %s has a different header than this planrun writes (%s); "+
			"start a new ledger: point the csv output at a new path, or move the old file away",
			l.path, describeHeaderDiff(got, Header()))
	}
	return true, upgradeLedger(l.path, data)
}

// upgradeLedger rewrites a ledger of an earlier column set in this version's columns,
// through a temporary file renamed over it, so a crash leaves the old or the new file.
// It runs under the old file's lock: a run waiting for that lock finds the path renamed
// and appends to the new file.
func upgradeLedger(path string, data []byte) error {
	rows, err := readAllRows(bytes.NewReader(data), path)
	if err != nil {
		return fmt.Errorf("upgrade ledger %s to this version's columns: %w", path, err)
	}
	return WriteFileAtomic(path, func(out io.Writer) error {
		w := csv.NewWriter(out)
		w.Write(Header())
		for _, r := range rows {
			w.Write(r.Record())
		}
		w.Flush()
		return w.Error()
	})
}

// headerIndex maps each field of a ledger header to this version's column; ok is false
// when a field is not a column this version knows.
func headerIndex(header []string) (idx []int, ok bool) {
	pos := make(map[string]int, len(columns))
	for i, c := range columns {
		pos[c.name] = i
	}
	idx = make([]int, len(header))
	for i, h := range header {
		if rn, ok := renamedColumns[h]; ok {
			h = rn.to
		}
		ci, known := pos[h]
		if !known {
			return nil, false
		}
		idx[i] = ci
	}
	return idx, true
}

// renamedColumns are earlier ledgers' columns read into this version's: a Slurm row's
// slurm_* and a Kubernetes row's k8s_* became the one batch_* set, the scheduler named
// by which set a row filled.
var renamedColumns = map[string]struct{ to, scheduler string }{
	"slurm_job":   {"batch_job", "slurm"},
	"slurm_node":  {"batch_node", "slurm"},
	"slurm_state": {"batch_state", "slurm"},
	"k8s_job":     {"batch_job", "kubernetes"},
	"k8s_pod":     {"batch_pod", "kubernetes"},
	"k8s_node":    {"batch_node", "kubernetes"},
	"k8s_state":   {"batch_state", "kubernetes"},
}

// batchSchedulerColumn is where a renamed column's scheduler goes.
var batchSchedulerColumn = slices.IndexFunc(columns, func(c column) bool { return c.name == "batch_scheduler" })

func describeHeaderDiff(got, want []string) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d columns, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("column %d is %q, want %q", i+1, got[i], want[i])
		}
	}
	return "unreadable header"
}

// write encodes one record into a buffer and writes it in one call at the end of the
// file, then fsyncs; under the lock. A write that fails part-way is cut off again, so
// the next record does not start inside it.
func (l *Ledger) write(rec []string) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(rec); err != nil {
		return err
	}
	w.Flush()
	if _, err := l.f.Write(buf.Bytes()); err != nil {
		l.f.Truncate(l.whole)
		return fmt.Errorf("append to ledger %s: %w", l.path, err)
	}
	l.whole += int64(buf.Len())
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync ledger %s: %w", l.path, err)
	}
	return nil
}

// Append writes one row (the backend URL made safe) at the end of the file and fsyncs
// it. Safe for concurrent use, and for several processes appending to one file.
func (l *Ledger) Append(r Row) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("append to closed ledger " + l.path)
	}
	return l.locked(r.Record())
}

// Close closes the file.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// ReadLedger reads the rows of a ledger written by OpenLedger/Append that count: every
// row but the superseded ones (see dropSuperseded).
func ReadLedger(path string) ([]Row, error) {
	rows, err := ReadLedgerAll(path)
	return dropSuperseded(rows), err
}

// ReadLedgerAll reads every whole row of a ledger in file order, superseded ones
// included: for a reader that follows the file as it grows, by position.
func ReadLedgerAll(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAllRows(f, path)
}

// wholeRecords returns data up to the end of its last whole record, and whether a torn
// record followed it. A record ends at a newline outside quotes; csv.Writer doubles every
// quote inside a quoted field, so the count of quote characters says whether a newline is
// inside a field (odd) or ends the record (even). A prefix of a record can therefore never
// pass for a whole one, even one cut just after a newline inside a quoted field.
func wholeRecords(data []byte) (whole []byte, torn bool) {
	end, quoted := 0, false
	for i, c := range data {
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\n' && !quoted:
			end = i + 1
		}
	}
	return data[:end], end < len(data)
}

// dropSuperseded keeps, of the rows one run wrote for one cell and level, the last in
// file order (the last appended): the ledger is only ever appended to, so when -resume
// measures a level again, the run's earlier row for it (interrupted, or failed before
// measuring) stays in the file, and the later row is the one that counts. Rows without a run id (ledgers from before run ids)
// are all kept.
func dropSuperseded(rows []Row) []Row {
	type level struct {
		run, cell string
		conc      int
		rate      float64
	}
	key := func(r Row) level { return level{r.RunID, r.CellID, r.Concurrency, r.RequestRate} }
	last := map[level]int{}
	for i, r := range rows {
		last[key(r)] = i
	}
	out := rows[:0]
	for i, r := range rows {
		if r.RunID == "" || last[key(r)] == i {
			out = append(out, r)
		}
	}
	return out
}

// readAllRows reads every whole row, superseded ones included (an upgrade rewrites
// them all).
func readAllRows(r io.Reader, name string) ([]Row, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	data, _ = wholeRecords(data)
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// An earlier version's ledger is read by column name; new columns stay empty.
	idx, ok := headerIndex(header)
	if !ok {
		return nil, fmt.Errorf("%s is not a planrun ledger this version can read (%s)", name, describeHeaderDiff(header, Header()))
	}
	current := slices.Equal(header, Header())
	var rows []Row
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, fmt.Errorf("%s: %w", name, err)
		}
		if !current {
			rec = reorder(rec, header, idx)
		}
		row, err := ParseRecord(rec)
		if err != nil {
			line, _ := cr.FieldPos(0)
			return rows, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		rows = append(rows, row)
	}
}

// reorder places the fields of an earlier version's record at this version's column
// positions; columns it did not have are empty (not measured). A renamed column's value
// fills its new column and names its scheduler (the other scheduler's set is empty).
func reorder(rec, header []string, idx []int) []string {
	out := make([]string, len(columns))
	for i, ci := range idx {
		if i >= len(rec) {
			continue
		}
		rn, renamed := renamedColumns[header[i]]
		switch {
		case !renamed:
			out[ci] = rec[i]
		case rec[i] != "":
			out[ci], out[batchSchedulerColumn] = rec[i], rn.scheduler
		}
	}
	return out
}
