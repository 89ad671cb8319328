// Package jsonschema checks a decoded JSON value against the part of JSON Schema that
// tool definitions use: type (one or a list), properties, required,
// additionalProperties (false, or a schema), items, enum and const. Keywords outside
// that part are ignored, so a schema using them is checked less strictly, never
// wrongly refused. It is what a tool call's arguments are held to (a request's tools),
// without a schema library for six keywords.
package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
)

// Match is "" when v (as encoding/json decodes into any) matches schema, else what
// does not, naming the place in v from at ("arguments.city"). A nil schema matches
// anything.
func Match(v any, schema map[string]any, at string) string {
	if schema == nil {
		return ""
	}
	if why := matchType(v, schema["type"], at); why != "" {
		return why
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return equal(e, v) }) {
		return fmt.Sprintf("%s is %s, not one of the schema's enum", at, show(v))
	}
	if c, ok := schema["const"]; ok && !equal(c, v) {
		return fmt.Sprintf("%s is %s, not the schema's const %s", at, show(v), show(c))
	}
	switch x := v.(type) {
	case map[string]any:
		return matchObject(x, schema, at)
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for i, e := range x {
				if why := Match(e, items, at+"["+strconv.Itoa(i)+"]"); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

func matchObject(x map[string]any, schema map[string]any, at string) string {
	props, _ := schema["properties"].(map[string]any)
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				if _, has := x[name]; !has {
					return fmt.Sprintf("%s lacks the required %q", at, name)
				}
			}
		}
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if p, ok := props[k].(map[string]any); ok {
			if why := Match(x[k], p, at+"."+k); why != "" {
				return why
			}
			continue
		}
		if _, declared := props[k]; declared {
			continue
		}
		switch extra := schema["additionalProperties"].(type) {
		case bool:
			if !extra {
				return fmt.Sprintf("%s has %q, which the schema does not allow", at, k)
			}
		case map[string]any:
			if why := Match(x[k], extra, at+"."+k); why != "" {
				return why
			}
		}
	}
	return ""
}

// matchType checks the type keyword: a name or a list of names.
func matchType(v any, t any, at string) string {
	var names []string
	switch x := t.(type) {
	case nil:
		return ""
	case string:
		names = []string{x}
	case []any:
		for _, n := range x {
			if s, ok := n.(string); ok {
				names = append(names, s)
			}
		}
	default:
		return ""
	}
	for _, n := range names {
		if isType(v, n) {
			return ""
		}
	}
	return fmt.Sprintf("%s is %s, not of type %s", at, show(v), show(t))
}

func isType(v any, name string) bool {
	switch name {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	}
	return true // a type this package does not know: not held against the value
}

func equal(a, b any) bool { return reflect.DeepEqual(a, b) }

// show is a value as JSON, cut short.
func show(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}
