//go:build !nokube

package kube

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// api is the part of the Kubernetes API the scheduler calls: Jobs (batch/v1), and
// ConfigMaps, Secrets, Services and pods (core/v1), over a REST client of each group
// whose scheme holds those two groups only. client-go's clientset would link the types
// of every API group the server has, some 40 MB of binary this package does not use.
type api struct {
	core, batch *rest.RESTClient
}

var (
	apiScheme = func() *runtime.Scheme {
		s := runtime.NewScheme()
		for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme} {
			if err := add(s); err != nil {
				panic(err) // the two groups' own registration: cannot fail
			}
		}
		// ListOptions and the other options as query parameters, as the clientset has them.
		metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
		return s
	}()
	apiParams = runtime.NewParameterCodec(apiScheme)
)

// newAPI makes the REST clients of cfg's cluster.
func newAPI(cfg *rest.Config) (*api, error) {
	client := func(gv schema.GroupVersion, path string) (*rest.RESTClient, error) {
		c := rest.CopyConfig(cfg)
		c.GroupVersion, c.APIPath = &gv, path
		c.NegotiatedSerializer = serializer.NewCodecFactory(apiScheme).WithoutConversion()
		if c.UserAgent == "" {
			c.UserAgent = rest.DefaultKubernetesUserAgent()
		}
		return rest.RESTClientFor(c)
	}
	core, err := client(corev1.SchemeGroupVersion, "/api")
	if err != nil {
		return nil, err
	}
	batch, err := client(batchv1.SchemeGroupVersion, "/apis")
	if err != nil {
		return nil, err
	}
	return &api{core: core, batch: batch}, nil
}

func (a *api) jobs(ns string) objects[batchv1.Job, batchv1.JobList] {
	return objects[batchv1.Job, batchv1.JobList]{a.batch, ns, "jobs"}
}

func (a *api) configMaps(ns string) objects[corev1.ConfigMap, corev1.ConfigMapList] {
	return objects[corev1.ConfigMap, corev1.ConfigMapList]{a.core, ns, "configmaps"}
}

func (a *api) secrets(ns string) objects[corev1.Secret, corev1.SecretList] {
	return objects[corev1.Secret, corev1.SecretList]{a.core, ns, "secrets"}
}

func (a *api) services(ns string) objects[corev1.Service, corev1.ServiceList] {
	return objects[corev1.Service, corev1.ServiceList]{a.core, ns, "services"}
}

func (a *api) pods(ns string) objects[corev1.Pod, corev1.PodList] {
	return objects[corev1.Pod, corev1.PodList]{a.core, ns, "pods"}
}

// podLog is the request for a pod's container's log, followed or read to its end.
func (a *api) podLog(ns, pod string, follow bool) *rest.Request {
	return a.core.Get().Namespace(ns).Resource("pods").Name(pod).SubResource("log").
		VersionedParams(&corev1.PodLogOptions{Container: container, Follow: follow}, apiParams)
}

// serverVersion asks the API server its version: whether it answers.
func (a *api) serverVersion(ctx context.Context) error {
	return a.core.Get().AbsPath("/version").Do(ctx).Error()
}

// objects are one resource of one namespace, with the clientset's calls: T its type, L
// its list's.
type objects[T, L any] struct {
	c          *rest.RESTClient
	ns, plural string
}

func (o objects[T, L]) req(r *rest.Request) *rest.Request {
	return r.Namespace(o.ns).Resource(o.plural)
}

func into[T any](r rest.Result) (*T, error) {
	out := new(T)
	obj, ok := any(out).(runtime.Object)
	if !ok {
		return nil, fmt.Errorf("kubernetes: %T is no API object", out)
	}
	return out, r.Into(obj)
}

func (o objects[T, L]) Get(ctx context.Context, name string, _ metav1.GetOptions) (*T, error) {
	return into[T](o.req(o.c.Get()).Name(name).Do(ctx))
}

func (o objects[T, L]) List(ctx context.Context, opts metav1.ListOptions) (*L, error) {
	return into[L](o.req(o.c.Get()).VersionedParams(&opts, apiParams).Do(ctx))
}

func (o objects[T, L]) Create(ctx context.Context, obj *T, _ metav1.CreateOptions) (*T, error) {
	return into[T](o.req(o.c.Post()).Body(any(obj).(runtime.Object)).Do(ctx))
}

func (o objects[T, L]) Update(ctx context.Context, obj *T, _ metav1.UpdateOptions) (*T, error) {
	name := any(obj).(metav1.Object).GetName()
	return into[T](o.req(o.c.Put()).Name(name).Body(any(obj).(runtime.Object)).Do(ctx))
}

func (o objects[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return o.req(o.c.Delete()).Name(name).Body(&opts).Do(ctx).Error()
}

func (o objects[T, L]) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, list metav1.ListOptions) error {
	return o.req(o.c.Delete()).VersionedParams(&list, apiParams).Body(&opts).Do(ctx).Error()
}
