package tinymodel

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// GGUF v3 is a little-endian container: a header, typed key/value metadata, tensor
// descriptors, then the tensor data, each tensor starting at a multiple of the alignment.
// Only what a llama model needs is written; the layout follows ggml's gguf.md.
const (
	ggufMagic     = "GGUF"
	ggufVersion   = 3
	ggufAlignment = 32
)

// GGUF metadata value types (gguf_type in ggml).
const (
	typeUint32  uint32 = 4
	typeInt32   uint32 = 5
	typeFloat32 uint32 = 6
	typeString  uint32 = 8
	typeArray   uint32 = 9
)

// ggml tensor types: only F32 is written, which every ggml backend can multiply.
const ggmlTypeF32 uint32 = 0

// kv is one metadata entry. Entries are kept in a slice, not a map, so that the
// file's bytes are the same on every run.
type kv struct {
	key   string
	value any // uint32, int32, float32, string, []string, []float32, []int32
}

// tensor is one named F32 tensor. dims are in ggml order: dims[0] is the
// contiguous (innermost) dimension.
type tensor struct {
	name string
	dims []uint64
	data []float32
}

// ggufFile is a whole model file waiting to be encoded.
type ggufFile struct {
	kvs     []kv
	tensors []tensor
}

// encode writes f as GGUF v3 to w.
func (f *ggufFile) encode(w io.Writer) error {
	e := &encoder{w: bufio.NewWriterSize(w, 1<<16)}
	e.raw([]byte(ggufMagic))
	e.u32(ggufVersion)
	e.u64(uint64(len(f.tensors)))
	e.u64(uint64(len(f.kvs)))
	for _, m := range f.kvs {
		e.str(m.key)
		e.value(m.key, m.value)
	}

	// Tensor offsets are relative to the start of the data section.
	var offset uint64
	for _, t := range f.tensors {
		if n := elements(t.dims); n != uint64(len(t.data)) {
			return fmt.Errorf("gguf: tensor %s: dims %v hold %d elements, data has %d", t.name, t.dims, n, len(t.data))
		}
		e.str(t.name)
		e.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			e.u64(d)
		}
		e.u32(ggmlTypeF32)
		e.u64(offset)
		offset = align(offset + 4*uint64(len(t.data)))
	}
	e.pad()

	for _, t := range f.tensors {
		for _, v := range t.data {
			e.u32(math.Float32bits(v))
		}
		e.pad()
	}
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

func elements(dims []uint64) uint64 {
	n := uint64(1)
	for _, d := range dims {
		n *= d
	}
	return n
}

func align(n uint64) uint64 {
	return (n + ggufAlignment - 1) / ggufAlignment * ggufAlignment
}

// encoder writes little-endian values and remembers the first error, so that
// encode reads as the file layout rather than as error checks.
type encoder struct {
	w   *bufio.Writer
	n   uint64 // bytes written so far, for alignment padding
	err error
	buf [8]byte
}

func (e *encoder) raw(b []byte) {
	if e.err != nil {
		return
	}
	_, e.err = e.w.Write(b)
	e.n += uint64(len(b))
}

func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:4], v)
	e.raw(e.buf[:4])
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:8], v)
	e.raw(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.raw([]byte(s))
}

func (e *encoder) pad() {
	for e.n%ggufAlignment != 0 {
		e.raw([]byte{0})
	}
}

// value writes a metadata value preceded by its type tag.
func (e *encoder) value(key string, v any) {
	switch v := v.(type) {
	case uint32:
		e.u32(typeUint32)
		e.u32(v)
	case int32:
		e.u32(typeInt32)
		e.u32(uint32(v))
	case float32:
		e.u32(typeFloat32)
		e.u32(math.Float32bits(v))
	case string:
		e.u32(typeString)
		e.str(v)
	case []string:
		e.u32(typeArray)
		e.u32(typeString)
		e.u64(uint64(len(v)))
		for _, s := range v {
			e.str(s)
		}
	case []float32:
		e.u32(typeArray)
		e.u32(typeFloat32)
		e.u64(uint64(len(v)))
		for _, f := range v {
			e.u32(math.Float32bits(f))
		}
	case []int32:
		e.u32(typeArray)
		e.u32(typeInt32)
		e.u64(uint64(len(v)))
		for _, i := range v {
			e.u32(uint32(i))
		}
	default:
		if e.err == nil {
			e.err = fmt.Errorf("gguf: metadata %s: unsupported value type %T", key, v)
		}
	}
}
