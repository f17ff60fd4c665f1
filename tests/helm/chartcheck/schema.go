// A JSON Schema (draft-07) validator for the keywords values.schema.json uses: type, properties,
// required, additionalProperties (boolean or schema), propertyNames, items, enum, minimum, maximum,
// minLength, pattern. An unknown keyword is an error, so the schema cannot silently use more.
package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

var knownKeywords = map[string]bool{
	"$schema": true, "title": true, "description": true, "type": true, "properties": true,
	"required": true, "additionalProperties": true, "propertyNames": true, "items": true, "enum": true,
	"minimum": true, "maximum": true, "minLength": true, "pattern": true,
}

func typeOf(v interface{}) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int, int64:
		return "integer"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []interface{}:
		return "array"
	case map[string]interface{}:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func number(v interface{}) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func validate(schema map[string]interface{}, v interface{}, path string) []string {
	var errs []string
	for k := range schema {
		if !knownKeywords[k] {
			errs = append(errs, fmt.Sprintf("%s: schema keyword %q is not supported by chartcheck", path, k))
		}
	}
	if t, ok := schema["type"]; ok {
		var allowed []string
		switch x := t.(type) {
		case string:
			allowed = []string{x}
		case []interface{}:
			for _, a := range x {
				allowed = append(allowed, a.(string))
			}
		}
		got := typeOf(v)
		match := false
		for _, a := range allowed {
			if a == got || (a == "number" && got == "integer") {
				match = true
			}
		}
		if !match {
			return append(errs, fmt.Sprintf("%s: is %s, want %s", path, got, strings.Join(allowed, " or ")))
		}
	}
	if e, ok := schema["enum"].([]interface{}); ok {
		found := false
		for _, a := range e {
			if fmt.Sprint(a) == fmt.Sprint(v) {
				found = true
			}
		}
		if !found {
			errs = append(errs, fmt.Sprintf("%s: %v is not one of %v", path, v, e))
		}
	}
	if n, ok := number(v); ok {
		if m, ok := number(schema["minimum"]); ok && n < m {
			errs = append(errs, fmt.Sprintf("%s: %v is below the minimum %v", path, v, m))
		}
		if m, ok := number(schema["maximum"]); ok && n > m {
			errs = append(errs, fmt.Sprintf("%s: %v is above the maximum %v", path, v, m))
		}
	}
	if s, ok := v.(string); ok {
		if m, ok := number(schema["minLength"]); ok && float64(len(s)) < m {
			errs = append(errs, fmt.Sprintf("%s: %q is shorter than %v", path, s, m))
		}
		if p, ok := schema["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(s) {
			errs = append(errs, fmt.Sprintf("%s: %q does not match %s", path, s, p))
		}
	}
	if obj, ok := v.(map[string]interface{}); ok {
		props, _ := schema["properties"].(map[string]interface{})
		if req, ok := schema["required"].([]interface{}); ok {
			for _, r := range req {
				if _, ok := obj[r.(string)]; !ok {
					errs = append(errs, fmt.Sprintf("%s: %s is required", path, r))
				}
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if pn, ok := schema["propertyNames"].(map[string]interface{}); ok {
				errs = append(errs, validate(pn, k, path+"."+k+"(name)")...)
			}
			if ps, ok := props[k].(map[string]interface{}); ok {
				errs = append(errs, validate(ps, obj[k], path+"."+k)...)
				continue
			}
			switch ap := schema["additionalProperties"].(type) {
			case bool:
				if !ap {
					errs = append(errs, fmt.Sprintf("%s: unknown key %q", path, k))
				}
			case map[string]interface{}:
				errs = append(errs, validate(ap, obj[k], path+"."+k)...)
			}
		}
	}
	if arr, ok := v.([]interface{}); ok {
		if items, ok := schema["items"].(map[string]interface{}); ok {
			for i, a := range arr {
				errs = append(errs, validate(items, a, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return errs
}
