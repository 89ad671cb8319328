package index

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/planrun/planrun/ledger"
)

// source is a file the index is built from, as it was then.
type source struct {
	path  string
	size  int64
	mtime int64
}

// runDirSources are the files of a run directory the index reads (history's loader
// reads no other).
var runDirSources = []string{ledger.ManifestFile, ledger.ResultsFile}

// sources are the ledger and every run directory's runDirSources.
func sources(dir string) ([]source, error) {
	paths := []string{filepath.Join(dir, ledger.ResultsFile)}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() {
			for _, name := range runDirSources {
				paths = append(paths, filepath.Join(dir, e.Name(), name))
			}
		}
	}
	var out []source
	for _, p := range paths {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, source{p, st.Size(), st.ModTime().UnixNano()})
	}
	return out, nil
}

// state is what an index records of how it was built.
type state struct {
	sources map[string]source
	ledger  mark
	notes   []string
}

// mark is how far the index has read the ledger: to the end of its last whole record,
// and a hash of the bytes before that end, so that a ledger which only grew is told
// from one rewritten (an upgrade, an edit) without reading it again.
type mark struct {
	Whole  int64  `json:"whole"`
	Tail   string `json:"tail"`
	Header string `json:"header"` // the ledger's header line
}

// tailBytes is how much of the ledger before the mark its hash covers.
const tailBytes = 4096

// builtFrom reads what the index was built from; ok is false when it was built by
// another schema or ledger column set (or not at all), so it must be rebuilt. The
// sources are read in one query: one a file would be 20,000 round trips for 10,000 runs.
func builtFrom(db *sql.DB) (st state, ok bool) {
	meta := map[string]string{}
	rs, err := db.Query(`SELECT key, value FROM meta`)
	if err != nil {
		return st, false
	}
	for rs.Next() {
		var k, v string
		if rs.Scan(&k, &v) == nil {
			meta[k] = v
		}
	}
	rs.Close()
	// The rows have a column for each ledger column, and a newer planrun has more.
	if meta["schema_version"] != strconv.Itoa(SchemaVersion) || meta["columns"] != columnList() {
		return st, false
	}
	if json.Unmarshal([]byte(meta["ledger"]), &st.ledger) != nil || json.Unmarshal([]byte(meta["notes"]), &st.notes) != nil {
		return st, false
	}
	rs, err = db.Query(`SELECT path, size, mtime_ns FROM sources`)
	if err != nil {
		return st, false
	}
	defer rs.Close()
	st.sources = map[string]source{}
	for rs.Next() {
		var s source
		if rs.Scan(&s.path, &s.size, &s.mtime) != nil {
			return st, false
		}
		st.sources[s.path] = s
	}
	return st, rs.Err() == nil
}

// hasDir says whether the index read run directory d.
func (s state) hasDir(d string) bool {
	for _, name := range runDirSources {
		if _, ok := s.sources[filepath.Join(d, name)]; ok {
			return true
		}
	}
	return false
}

func sameSources(built map[string]source, srcs []source) bool {
	if len(built) != len(srcs) {
		return false
	}
	for _, s := range srcs {
		if built[s.path] != s {
			return false
		}
	}
	return true
}

// ledgerMark is the mark of the ledger at path as srcs found it (its size then, so
// records appended since are read by the next update, not skipped).
func ledgerMark(path string, srcs []source) (mark, error) {
	size := int64(-1)
	for _, s := range srcs {
		if s.path == path {
			size = s.size
		}
	}
	if size < 0 {
		return mark{}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return mark{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, size))
	if err != nil {
		return mark{}, err
	}
	whole := wholeRecords(data)
	header, _, _ := bytes.Cut(data, []byte("\n"))
	return mark{Whole: int64(len(whole)), Tail: tailHash(whole), Header: string(header)}, nil
}

func tailHash(whole []byte) string {
	sum := sha256.Sum256(whole[max(len(whole)-tailBytes, 0):])
	return hex.EncodeToString(sum[:])
}

// wholeRecords is data up to the end of its last whole CSV record: a newline outside
// quotes (the ledger's writer doubles quotes inside fields, so their count tells).
func wholeRecords(data []byte) []byte {
	end, quoted := 0, false
	for i, c := range data {
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\n' && !quoted:
			end = i + 1
		}
	}
	return data[:end]
}
