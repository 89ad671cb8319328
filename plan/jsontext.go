package plan

import (
	"encoding/json"
	"errors"
	"fmt"
)

// jsonLineProblem says in a user's words why a line of a JSON Lines file did not
// decode: where its JSON breaks off, or which field has the wrong type, rather than
// the decoder's "invalid character 'o' in literal null (expecting 'u')".
func jsonLineProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("it is not valid JSON (it breaks off at byte %d of the line)", syn.Offset)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Sprintf("it is a JSON %s, not an object", typ.Value)
	case errors.As(err, &typ):
		return fmt.Sprintf("its %q is a JSON %s, not a %s", typ.Field, typ.Value, typ.Type)
	}
	return "it is not valid JSON: " + err.Error()
}
