// Package containerimage writes the planrun agent image that Kubernetes Jobs run (package
// kube): a static planrun binary on an empty base, as a docker-archive tarball that
// `ctr images import`, `docker load` and `podman load` read, built with
// go-containerregistry (ko's library) and no Docker daemon. The repository's Dockerfile
// builds the same image for those who build images their own way.
package containerimage

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// BinaryPath is where the image holds planrun; the Job's container runs it.
const BinaryPath = "/usr/local/bin/planrun"

// User is the unprivileged user the agent runs as (distroless' "nonroot").
const User = "65532:65532"

// Options say what goes into the image.
type Options struct {
	// Binary is a statically linked planrun for linux (CGO_ENABLED=0 go build).
	Binary string
	// CACerts is a PEM bundle for HTTPS backends (a hosted gateway), put at
	// /etc/ssl/certs/ca-certificates.crt; empty leaves it out.
	CACerts string
	// Tag names the image, as the plan's image names it ("planrun:dev").
	Tag string
	// Arch is the binary's GOARCH ("amd64"), as the image's config records it.
	Arch string
}

// CheckStatic fails when the file is not a statically linked Linux executable: an empty
// base has no C library for a dynamic one to load.
func CheckStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s is not a Linux executable: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked: the agent image has no C library; build it with CGO_ENABLED=0 go build -o planrun-static ./cmd/planrun", path)
		}
	}
	return nil
}

// Write writes the image to w as a docker-archive tarball.
func Write(w io.Writer, o Options) error {
	if err := CheckStatic(o.Binary); err != nil {
		return err
	}
	ref, err := name.NewTag(o.Tag)
	if err != nil {
		return fmt.Errorf("image tag %q: %w", o.Tag, err)
	}
	layerTar, err := layer(o)
	if err != nil {
		return err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layerTar)), nil })
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", o.Arch
	cfg.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cfg.Config.Entrypoint = []string{BinaryPath}
	cfg.Config.Env = []string{"PATH=/usr/local/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	cfg.Config.User = User
	cfg.Config.WorkingDir = "/"
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	return tarball.Write(ref, img, w)
}

// layer is the image's one layer: the binary, the CA bundle, and a /tmp.
func layer(o Options) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	dirs := []string{"etc/", "etc/ssl/", "etc/ssl/certs/", "usr/", "usr/local/", "usr/local/bin/"}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "tmp/", Mode: 0o1777, ModTime: epoch}); err != nil {
		return nil, err
	}
	add := func(src, dst string, mode int64) error {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: dst, Mode: mode, Size: int64(len(b)), ModTime: epoch}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	}
	if err := add(o.Binary, BinaryPath[1:], 0o755); err != nil {
		return nil, err
	}
	if o.CACerts != "" {
		if err := add(o.CACerts, "etc/ssl/certs/ca-certificates.crt", 0o644); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
