package containerimage

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// writeELF writes a minimal 64-bit Linux executable: its header, and a PT_INTERP
// program header (the mark of a dynamically linked one) when dynamic. The bytes after
// the headers stand for the code, so a copy of them is told from another file.
func writeELF(t *testing.T, dynamic bool) string {
	t.Helper()
	var b bytes.Buffer
	h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_X86_64), Version: uint32(elf.EV_CURRENT),
		Ehsize: 64, Phentsize: 56}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	if dynamic {
		h.Phoff, h.Phnum = 64, 1
	}
	binary.Write(&b, binary.LittleEndian, h)
	if dynamic {
		binary.Write(&b, binary.LittleEndian, elf.Prog64{Type: uint32(elf.PT_INTERP)})
	}
	b.WriteString("planrun's code")
	path := filepath.Join(t.TempDir(), "planrun")
	if err := os.WriteFile(path, b.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckStatic(t *testing.T) {
	notELF := filepath.Join(t.TempDir(), "script")
	os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755)
	for _, c := range []struct {
		path string
		want string // in the error; "" for none
	}{
		{writeELF(t, false), ""},
		{writeELF(t, true), "dynamically linked"},
		{notELF, "not a Linux executable"},
	} {
		err := CheckStatic(c.path)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckStatic(%s) = %v, want an error with %q", c.path, err, c.want)
		}
	}
}

// The tarball Write makes reads back as one image: the tag, a config that runs the
// binary as the unprivileged user, and one layer holding the binary, the CA bundle and a
// /tmp anyone may write, byte for byte and with their modes. Two writes are the same
// bytes (every time is the epoch), so an image is rebuilt only when its inputs change.
func TestWriteReadsBack(t *testing.T) {
	bin := writeELF(t, false)
	certs := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(certs, []byte("-----BEGIN CERTIFICATE-----\n"), 0o600)
	o := Options{Binary: bin, CACerts: certs, Tag: "planrun:dev", Arch: "arm64"}
	var out bytes.Buffer
	if err := Write(&out, o); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := Write(&again, o); err != nil || !bytes.Equal(out.Bytes(), again.Bytes()) {
		t.Errorf("a second write differs (err %v)", err)
	}

	tag, _ := name.NewTag("planrun:dev")
	img, err := tarball.Image(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out.Bytes())), nil }, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != "arm64" || !slices.Equal(cfg.Config.Entrypoint, []string{BinaryPath}) ||
		cfg.Config.User != User || cfg.Created.Unix() != 0 {
		t.Errorf("config %s/%s, entrypoint %q, user %q, created %v", cfg.OS, cfg.Architecture, cfg.Config.Entrypoint, cfg.Config.User, cfg.Created)
	}
	if !slices.Contains(cfg.Config.Env, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt") {
		t.Errorf("env %q names no CA bundle", cfg.Config.Env)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (err %v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	type file struct {
		mode int64
		data string
	}
	got := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		got[h.Name] = file{h.Mode, string(data)}
	}
	binData, _ := os.ReadFile(bin)
	for path, want := range map[string]file{
		"usr/local/bin/planrun":             {0o755, string(binData)},
		"etc/ssl/certs/ca-certificates.crt": {0o644, "-----BEGIN CERTIFICATE-----\n"},
		"tmp/":                              {0o1777, ""},
	} {
		if g, ok := got[path]; !ok || g != want {
			t.Errorf("%s: %+v (in the layer: %v), want %+v", path, g, ok, want)
		}
	}
}

// A dynamically linked binary, or a tag that is not one, writes nothing.
func TestWriteRefuses(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Binary: writeELF(t, true), Tag: "planrun:dev", Arch: "amd64"}, "dynamically linked"},
		{Options{Binary: writeELF(t, false), Tag: "Planrun:dev!", Arch: "amd64"}, "image tag"},
	} {
		var out bytes.Buffer
		err := Write(&out, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) || out.Len() != 0 {
			t.Errorf("Write(%+v) = %v with %d bytes, want an error with %q and nothing written", c.o, err, out.Len(), c.want)
		}
	}
}
