// Command coredns is the test cluster's DNS (scripts/k8s-cluster.sh builds it into
// .tools/k8s/bin): CoreDNS, the cluster DNS Kubernetes ships, with only the plugins the
// cluster needs compiled in, the way CoreDNS's own plugin.cfg selects them. Its
// kubernetes plugin reads Services and EndpointSlices from the API server, so that a pod
// of an Indexed Job whose subdomain names a headless Service is
// <job>-<index>.<service>.<namespace>.svc.cluster.local, as on any cluster.
//
// A module of its own, so that CoreDNS's dependencies move neither the versions the
// cluster's binaries build with (../go.mod) nor their stamp.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

// directives are the plugins, in CoreDNS's own order (core/dnsserver/zdirectives.go).
var directives = []string{"bind", "ready", "errors", "kubernetes"}

func init() { dnsserver.Directives = directives }

func main() { coremain.Run() }
