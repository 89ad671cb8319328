package plan

import (
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/planrun/planrun/backends"
)

// decodeKeyHeader decodes a backend's api_key_header: how the key goes to the server
// ("x-api-key" or "bearer"), among the ways its kind allows, the kind's first by default.
func decodeKeyHeader(l *loader, attrs hcl.Attributes, ctx *hcl.EvalContext, rules backends.Kind, be *Backend) {
	allowed := rules.KeyHeaders
	if len(allowed) > 0 {
		be.KeyHeader = allowed[0]
	}
	a := attrs["api_key_header"]
	if a == nil {
		return
	}
	if len(allowed) == 0 {
		l.errorf(a.NameRange.Ptr(), "Unsupported argument",
			"A %s backend sends its key as Authorization: Bearer only; api_key_header is for the anthropic kind (x-api-key or bearer).", be.Kind)
		return
	}
	if l.decode(a, ctx, &be.KeyHeader) && !slices.Contains(allowed, be.KeyHeader) {
		l.errorf(a.Expr.Range().Ptr(), "Invalid api_key_header",
			"api_key_header is %s, not %q: how the key read from api_key_env is sent (x-api-key: <key>, or Authorization: Bearer <key>).%s",
			quoteList(allowed), be.KeyHeader, suggestion(be.KeyHeader, allowed))
		be.KeyHeader = allowed[0]
	}
}
