// The test cluster's pod sandbox (scripts/k8s-cluster.sh builds it into .tools/k8s/bin):
// a module of its own, so that its one dependency does not move the versions the
// cluster's binaries build with (../go.mod).
module github.com/planrun/planrun/tools/k8s/pause

go 1.26.0

require github.com/google/go-containerregistry v0.22.1

require (
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
)
