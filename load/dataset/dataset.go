// Package dataset reads the prompts and lengths of a plan's `dataset` blocks (JSONL,
// ShareGPT, a plain-text corpus or a Mooncake trace) and draws request lengths from the
// declared distributions. Files are streamed, never loaded whole: a seeded reservoir
// keeps only the rows a workload sends, and the file's SHA-256 and row count are taken
// on the same pass, so a 1 GB trace costs the memory of its sample.
package dataset

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// The formats a dataset block can name.
const (
	FormatJSONL    = "jsonl"
	FormatShareGPT = "sharegpt"
	FormatText     = "text"
	FormatMooncake = "mooncake"
)

// Formats lists the accepted formats, for plan diagnostics.
var Formats = []string{FormatJSONL, FormatShareGPT, FormatText, FormatMooncake}

// Spec says how to read a dataset file.
type Spec struct {
	// Path is the file; the plan resolves it relative to the plan's directory.
	Path   string
	Format string
	// PromptField and OutputTokensField name a JSONL row's fields (defaults "prompt" and
	// none); rows without the output field have OutputTokens 0 (unknown).
	PromptField       string
	OutputTokensField string
	// TextWords is the length in words of each prompt cut from a text corpus.
	TextWords int
	// MinPromptWords and MaxPromptWords keep only rows whose prompt has that many words
	// (0: no bound). A Mooncake row's input_length is held to them as its prompt length.
	MinPromptWords, MaxPromptWords int
}

// Row is one usable entry of a dataset.
type Row struct {
	// Line is the row's line in the file (its first line, for a text prompt).
	Line   int
	Prompt string
	// PromptWords is the prompt's length in whitespace-separated words.
	PromptWords int
	// OutputTokens is the expected output length in tokens (0: unknown).
	OutputTokens int
	// OutputWords is the expected output length in words, where the file gives an
	// answer's text rather than a token count (ShareGPT's first gpt answer).
	OutputWords int
	// Mooncake trace fields: arrival from the trace's start (the file's timestamp, in
	// ms, which may have a fraction), lengths in tokens, and the ids of the prefix blocks
	// the prompt is made of.
	Timestamp    time.Duration
	InputLength  int
	OutputLength int
	HashIDs      []int64
}

// Info describes a whole dataset file, for the run's manifest.
type Info struct {
	SHA256 string `json:"sha256"`
	// Rows counts the file's rows (lines, array elements, or text prompts); Kept those
	// that passed the length filters.
	Rows int `json:"rows"`
	Kept int `json:"kept"`
}

// ErrEmpty is returned for a dataset without a single usable row.
var ErrEmpty = errors.New("no usable row")

// Scan streams the file once, calling fn for every row that passes the length filters,
// and returns the file's Info. A malformed row stops the scan with an error naming
// file:line; an error from fn stops it too.
func Scan(spec Spec, fn func(Row) error) (Info, error) {
	f, err := os.Open(spec.Path)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	h := sha256.New()
	var info Info
	keep := func(r Row) error {
		info.Rows++
		if !spec.admits(r) {
			return nil
		}
		info.Kept++
		return fn(r)
	}
	src := bufio.NewReaderSize(io.TeeReader(f, h), 1<<16)
	switch spec.Format {
	case FormatJSONL, FormatMooncake:
		err = scanLines(src, spec, keep)
	case FormatShareGPT:
		err = scanShareGPT(src, spec, keep)
	case FormatText:
		err = scanText(src, spec, keep)
	default:
		err = fmt.Errorf("unknown format %q (one of %s)", spec.Format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return info, err
	}
	// The reader may stop before EOF (a text tail shorter than a prompt); hash the rest.
	if _, err := io.Copy(io.Discard, src); err != nil {
		return info, err
	}
	info.SHA256 = hex.EncodeToString(h.Sum(nil))
	if info.Kept == 0 {
		if info.Rows == 0 {
			return info, fmt.Errorf("%s: %w: the file is empty", spec.Path, ErrEmpty)
		}
		return info, fmt.Errorf("%s: %w: none of its %d rows passes the length filters", spec.Path, ErrEmpty, info.Rows)
	}
	return info, nil
}

// admits applies the length filters.
func (s Spec) admits(r Row) bool {
	n := r.PromptWords
	if s.Format == FormatMooncake {
		n = r.InputLength
	}
	return (s.MinPromptWords == 0 || n >= s.MinPromptWords) && (s.MaxPromptWords == 0 || n <= s.MaxPromptWords)
}

// lineError names the file and line of a malformed row.
func lineError(spec Spec, line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", spec.Path, line, fmt.Sprintf(format, args...))
}
