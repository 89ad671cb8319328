# The planrun agent image that Kubernetes Jobs run (a hardware block's kubernetes { image = ... }),
# for those who build images with a Docker-compatible builder:
#
#   docker build -t registry.lab/planrun:1 .
#
# `planrun image` writes the same image as a tarball without a Docker daemon (docs/placements.md).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# No cgo: the image has no C library (so no NVML in the pod; docs/placements.md says what the rows do).
# -tags nokube: a pod places no Jobs, so its planrun links no Kubernetes module.
RUN CGO_ENABLED=0 go build -tags nokube -trimpath -ldflags "-s -w" -o /planrun ./cmd/planrun

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /planrun /usr/local/bin/planrun
COPY --from=build --chmod=1777 /tmp /tmp
ENV PATH=/usr/local/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/planrun"]
