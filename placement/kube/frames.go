package kube

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/planrun/planrun/ledger"
)

// The agent's run directory reaches the coordinator through the pod's log, so that no
// shared filesystem is needed and any kubeconfig that can read logs will do. The agent
// (planrun apply -run-dir DIR -stream) writes the new bytes of the files the coordinator
// merges as frames among its log lines:
//
//	@planrun start
//	@planrun file results.csv 0 <base64>
//	@planrun size manifest.json 2048
//	@planrun end 0
//
// A file frame puts its bytes at that offset of the named file; a size frame truncates
// the file (after a rewrite shorter than before). Frames are positional, so reading the
// whole log again after a broken stream writes the same files. Each frame stays below
// containerd's 16 KiB log line, so no runtime splits one.
const framePrefix = "@planrun "

// frameChunk is the most file bytes one frame carries (11 KiB of base64).
const frameChunk = 8 << 10

// StreamedFiles are the run directory's files the coordinator merges from a job:
// its rows, its requests and its manifest.
var StreamedFiles = []string{ledger.ResultsFile, ledger.RequestsFile, ledger.ManifestFile}

// fileState is what the sender has sent of one file.
type fileState struct {
	sent int64
	info os.FileInfo // as last sent: a file that is not os.SameFile was replaced
}

// Sender writes a run directory's files to a log as frames.
type Sender struct {
	dir   string
	mu    sync.Mutex
	w     io.Writer
	files map[string]*fileState
}

// NewSender sends dir's StreamedFiles to w (the agent's stdout) and writes the start frame.
func NewSender(dir string, w io.Writer) *Sender {
	s := &Sender{dir: dir, w: w, files: map[string]*fileState{}}
	s.line("start")
	return s
}

// Run sends what changed every interval until ctx ends, then once more.
func (s *Sender) Run(ctx context.Context, interval time.Duration) {
	for {
		s.Flush()
		select {
		case <-ctx.Done():
			s.Flush()
			return
		case <-time.After(interval):
		}
	}
}

// End flushes the files and writes the end frame with apply's exit code.
func (s *Sender) End(code int) {
	s.Flush()
	s.line("end " + strconv.Itoa(code))
}

func (s *Sender) line(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	io.WriteString(s.w, framePrefix+text+"\n")
}

// Flush sends the bytes of each file not sent yet: the new tail of a file that grew, or
// the whole file again when it was replaced (a new inode, as an atomic rewrite makes)
// or shrank.
func (s *Sender) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range StreamedFiles {
		s.flushFile(name)
	}
}

func (s *Sender) flushFile(name string) {
	path := filepath.Join(s.dir, name)
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return
	}
	st := s.files[name]
	if st == nil {
		st = &fileState{}
		s.files[name] = st
	}
	replaced := st.info != nil && !os.SameFile(st.info, info) || info.Size() < st.sent
	if !replaced && st.info != nil && info.Size() == st.sent && info.ModTime().Equal(st.info.ModTime()) {
		return
	}
	from := st.sent
	if replaced {
		from = 0
	}
	buf := make([]byte, frameChunk)
	off := from
	for {
		n, err := f.ReadAt(buf, off)
		if n > 0 {
			fmt.Fprintf(s.w, "%sfile %s %d %s\n", framePrefix, name, off, base64.StdEncoding.EncodeToString(buf[:n]))
			off += int64(n)
		}
		if err != nil {
			break
		}
	}
	if replaced {
		fmt.Fprintf(s.w, "%ssize %s %d\n", framePrefix, name, off)
	}
	st.sent, st.info = off, info
}

// receiver writes the frames of a pod's log into a job's directory and every other line
// to its log file.
type receiver struct {
	dir string
	log io.Writer
	// started and ended are what the log has shown so far; code is the end frame's exit
	// code.
	started, ended bool
	code           int
	files          map[string]*os.File
	// lines counts the agent's own lines in the stream being read; the first skip of
	// them were written from an earlier stream of the same log.
	lines, skip int
}

func newReceiver(dir string, log io.Writer) *receiver {
	return &receiver{dir: dir, log: log, files: map[string]*os.File{}}
}

// read reads a log stream to its end, calling onStart at the start frame; the files
// stay open for the next stream.
func (r *receiver) read(stream io.Reader, onStart func()) error {
	r.lines = 0
	br := bufio.NewReaderSize(stream, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if ferr := r.line(line); ferr != nil {
				return ferr
			}
			if r.started && onStart != nil {
				onStart()
				onStart = nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// line handles one log line: a frame, or a line of the agent's own output.
func (r *receiver) line(line []byte) error {
	text, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte(framePrefix))
	if !ok {
		return r.own(line)
	}
	f := strings.Fields(string(text))
	switch {
	case len(f) == 1 && f[0] == "start":
		r.started = true
	case len(f) == 2 && f[0] == "end":
		r.ended = true
		r.code, _ = strconv.Atoi(f[1])
	case len(f) == 4 && f[0] == "file":
		off, err := strconv.ParseInt(f[2], 10, 64)
		data, derr := base64.StdEncoding.DecodeString(f[3])
		if err != nil || derr != nil {
			return fmt.Errorf("a malformed frame for %s in the pod's log", f[1])
		}
		w, err := r.file(f[1])
		if err != nil {
			return err
		}
		_, err = w.WriteAt(data, off)
		return err
	case len(f) == 3 && f[0] == "size":
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("a malformed size frame for %s in the pod's log", f[1])
		}
		w, err := r.file(f[1])
		if err != nil {
			return err
		}
		return w.Truncate(size)
	default:
		return r.own(line)
	}
	return nil
}

// own writes a line of the agent's own output to the log file, unless an earlier
// stream of the same log has.
func (r *receiver) own(line []byte) error {
	r.lines++
	if r.lines <= r.skip {
		return nil
	}
	_, err := r.log.Write(line)
	return err
}

// file opens one of the StreamedFiles in the job's directory; a name that is not one of
// them is refused, so a log line cannot write anywhere else.
func (r *receiver) file(name string) (*os.File, error) {
	if f := r.files[name]; f != nil {
		return f, nil
	}
	if !slices.Contains(StreamedFiles, name) {
		return nil, fmt.Errorf("the pod's log names a file planrun does not merge: %q", name)
	}
	f, err := os.OpenFile(filepath.Join(r.dir, name), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	r.files[name] = f
	return f, nil
}

func (r *receiver) close() {
	for _, f := range r.files {
		f.Close()
	}
}
