package backends

import (
	"bufio"
	"bytes"
	"io"
)

// LineReader reads a stream line by line without allocating, for the decoders of both
// wire formats (SSE and NDJSON). A line longer than the read buffer is reassembled in a
// buffer the reader keeps.
type LineReader struct {
	R    *bufio.Reader
	long []byte
}

// ReadLine returns the next line without its "\n" or "\r\n", valid until the next call.
// io.EOF comes only when no bytes are left: a last line without "\n" is returned first.
func (l *LineReader) ReadLine() ([]byte, error) {
	line, err := l.R.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		l.long = append(l.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = l.R.ReadSlice('\n')
			l.long = append(l.long, line...)
		}
		line = l.long
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}
