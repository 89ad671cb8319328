package rundir

import (
	"strings"
	"testing"

	"github.com/planrun/planrun/plan"
)

func TestRedactCommand(t *testing.T) {
	vars := []*plan.Variable{{Name: "url"}, {Name: "token", Sensitive: true}}
	tests := []struct{ in, want string }{
		{"planrun apply -var url=http://x -var token=s3cret plan.hcl", "planrun apply -var url=http://x -var token=(sensitive) plan.hcl"},
		{"planrun apply -var=token=s3cret --var=url=u plan.hcl", "planrun apply -var=token=(sensitive) --var=url=u plan.hcl"},
		{"planrun apply --var token=a=b -var-file token.hcl -only token=x plan.hcl", "planrun apply --var token=(sensitive) -var-file token.hcl -only token=x plan.hcl"},
		{"planrun apply -var", "planrun apply -var"},
	}
	for _, tt := range tests {
		in := strings.Fields(tt.in)
		if got := strings.Join(RedactCommand(in, vars), " "); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.in, got, tt.want)
		}
		if strings.Join(in, " ") != tt.in {
			t.Errorf("RedactCommand changed its argument: %v", in)
		}
	}
}
