package main

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/planrun/planrun/internal/version"
	"github.com/planrun/planrun/placement/containerimage"
)

func init() {
	register("image", "write the agent image that Kubernetes Jobs run planrun from, as a tarball (no Docker daemon)", runImage)
}

// defaultCACerts is Debian's CA bundle, which HTTPS backends (a hosted gateway) need in the pod.
const defaultCACerts = "/etc/ssl/certs/ca-certificates.crt"

func runImage(_ context.Context, env *Env, args []string) int {
	fs := newFlagSet(env, "image", "", `Write the planrun agent image that a hardware block's kubernetes { image = ... } names:
a statically linked planrun, built without Kubernetes placement (a pod places no Jobs),
on an empty base (plus a CA bundle), as a docker-archive
tarball, built without a Docker daemon. Load it into the cluster's nodes or push it:

  CGO_ENABLED=0 go build -tags nokube -o planrun-static ./cmd/planrun
  planrun image -binary planrun-static -tag planrun:dev -o planrun-image.tar
  ctr -n k8s.io images import planrun-image.tar      (containerd; or docker/podman load -i)

The repository's Dockerfile builds the same image with a Docker-compatible builder.`)
	self, _ := os.Executable()
	o := containerimage.Options{Arch: runtime.GOARCH}
	out := ""
	fs.StringVar(&o.Binary, "binary", self, "the static planrun to put in the image (default: this planrun, if it is static)")
	fs.StringVar(&o.Tag, "tag", "planrun:"+version.String(), "the image's name, as the plan's image names it")
	fs.StringVar(&out, "o", "planrun-image.tar", "the tarball to write")
	ca := defaultCACerts
	fs.StringVar(&ca, "ca-certs", ca, "a PEM CA bundle for HTTPS backends; \"\" for none")
	if code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	if _, err := os.Stat(ca); err == nil {
		o.CACerts = ca
	} else if ca != defaultCACerts && ca != "" {
		fmt.Fprintf(env.Stderr, "planrun image: -ca-certs: %v\n", err)
		return exitUsage
	}
	f, err := os.Create(out)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun image: %v\n", err)
		return exitError
	}
	if err := containerimage.Write(f, o); err != nil {
		f.Close()
		os.Remove(out)
		fmt.Fprintf(env.Stderr, "planrun image: %v\n", err)
		return exitError
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(env.Stderr, "planrun image: %v\n", err)
		return exitError
	}
	fmt.Fprintf(env.Stdout, "Wrote %s to %s.\n", o.Tag, out)
	return exitOK
}
