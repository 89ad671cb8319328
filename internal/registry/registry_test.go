package registry

import (
	"slices"
	"strings"
	"testing"
)

type entry struct {
	name string
	size int
}

func TestRegistry(t *testing.T) {
	r := New("entry", func(e entry) string { return e.name })
	r.Register(entry{"zeta", 1})
	r.Register(entry{"alpha", 2})
	r.Register(entry{"mid", 3})
	if got := r.Names(nil); !slices.Equal(got, []string{"alpha", "mid", "zeta"}) {
		t.Errorf("Names(nil) = %v, want all, sorted", got)
	}
	if got := r.Names(func(e entry) bool { return e.size > 1 }); !slices.Equal(got, []string{"alpha", "mid"}) {
		t.Errorf("Names(size > 1) = %v, want the kept ones, sorted", got)
	}
	if e, ok := r.Lookup("mid"); !ok || e.size != 3 {
		t.Errorf("Lookup(mid) = %+v, %v", e, ok)
	}
	if e, ok := r.Lookup("none"); ok || e != (entry{}) {
		t.Errorf("Lookup(none) = %+v, %v; want the zero entry, false", e, ok)
	}
	if got := New("entry", func(e entry) string { return e.name }).Names(nil); len(got) != 0 {
		t.Errorf("an empty registry names %v", got)
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), `entry "alpha" registered twice`) {
			t.Errorf("registering alpha twice: panic %v", p)
		}
	}()
	r.Register(entry{"alpha", 4})
}
