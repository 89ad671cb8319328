package fleet

import "testing"

// An agent reads its lead from EnvLead, and from the variable's older name when a
// script that starts agents itself still sets that one alone.
func TestConfigLeadFromEnvironment(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{EnvLead: "a:1"}, "a:1"},
		{map[string]string{"PLANRUN_AGENT_COORDINATOR": "b:2"}, "b:2"},
		{map[string]string{EnvLead: "a:1", "PLANRUN_AGENT_COORDINATOR": "b:2"}, "a:1"},
		{map[string]string{}, ""},
	} {
		env := map[string]string{EnvCount: "2", EnvIndex: "1", EnvToken: "t"}
		for k, v := range c.env {
			env[k] = v
		}
		cfg := Config{Index: -1}
		err := cfg.Env(func(k string) string { return env[k] })
		if cfg.Lead != c.want || (err != nil) != (c.want == "") {
			t.Errorf("%v: lead %q, error %v; want %q", c.env, cfg.Lead, err, c.want)
		}
	}
}
