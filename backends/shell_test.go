package backends_test

import (
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

// A backend's url must be http(s) with a host; the error names the backend and an example.
func TestCheckURL(t *testing.T) {
	for url, ok := range map[string]bool{"http://127.0.0.1:8000": true, "https://api.example.test/v1": true,
		"ftp://host": false, "127.0.0.1:8000": false, "http://": false, "http://%zz": false, "": false} {
		err := backends.CheckURL(backends.Config{Name: "b1", URL: url}, "http://127.0.0.1:8000")
		if (err == nil) != ok || err != nil && !strings.Contains(err.Error(), "backend b1: url ") {
			t.Errorf("CheckURL(%q) = %v, want ok %v", url, err, ok)
		}
	}
}
