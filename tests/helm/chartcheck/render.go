// Rendering a Helm chart the way `helm template` does, with what Debian packages: Go's text/template,
// the Sprig function library Helm uses, and Helm's own few functions (include, required, toYaml, ...).
// Not supported (the chart must not use them): lookup, tpl, .Capabilities beyond the version fields,
// subcharts.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"gopkg.in/yaml.v3"
)

type chart struct {
	dir      string
	meta     map[string]interface{}
	values   map[string]interface{}
	schema   map[string]interface{}
	files    map[string]string // every file of the chart, by path relative to dir
	template []string          // template file names relative to dir, sorted
}

func loadChart(dir string) (*chart, error) {
	c := &chart{dir: dir, files: map[string]string{}}
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		c.files[filepath.ToSlash(rel)] = string(data)
		if strings.HasPrefix(rel, "templates/") {
			c.template = append(c.template, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(c.template)
	if err := yaml.Unmarshal([]byte(c.files["Chart.yaml"]), &c.meta); err != nil {
		return nil, fmt.Errorf("Chart.yaml: %v", err)
	}
	if err := yaml.Unmarshal([]byte(c.files["values.yaml"]), &c.values); err != nil {
		return nil, fmt.Errorf("values.yaml: %v", err)
	}
	if s, ok := c.files["values.schema.json"]; ok {
		if err := json.Unmarshal([]byte(s), &c.schema); err != nil {
			return nil, fmt.Errorf("values.schema.json: %v", err)
		}
	}
	return c, nil
}

// mergeValues deep-merges override into base (a copy), as `helm -f` does: maps merge, anything else
// replaces, and null removes the key.
func mergeValues(base, override map[string]interface{}) map[string]interface{} {
	out := map[string]interface{}{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range override {
		if v == nil {
			delete(out, k)
			continue
		}
		if om, ok := v.(map[string]interface{}); ok {
			if bm, ok := out[k].(map[string]interface{}); ok {
				out[k] = mergeValues(bm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// files is .Files: Get returns a chart file's content ("" when absent, like Helm).
type files map[string]string

func (f files) Get(name string) string { return f[name] }

func toYAML(v interface{}) string {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// render executes every template and returns the rendered manifests by template name (Helm's
// "depot/templates/x.yaml" form); partials (_*.tpl) are only defined, NOTES.txt is rendered too.
func (c *chart) render(values map[string]interface{}, releaseName, namespace string) (map[string]string, error) {
	name, _ := c.meta["name"].(string)
	root := template.New("chart").Option("missingkey=zero")
	funcs := sprig.TxtFuncMap()
	for _, k := range []string{"env", "expandenv"} { // Helm removes these: rendering must not read the environment
		delete(funcs, k)
	}
	funcs["include"] = func(tname string, data interface{}) (string, error) {
		var buf bytes.Buffer
		err := root.ExecuteTemplate(&buf, tname, data)
		return buf.String(), err
	}
	funcs["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil {
			return nil, fmt.Errorf("%s", msg)
		}
		if s, ok := v.(string); ok && s == "" {
			return nil, fmt.Errorf("%s", msg)
		}
		return v, nil
	}
	funcs["toYaml"] = toYAML
	funcs["fromYaml"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		_ = yaml.Unmarshal([]byte(s), &m)
		return m
	}
	funcs["lookup"] = func(...interface{}) (map[string]interface{}, error) {
		return nil, fmt.Errorf("lookup is not supported: the chart must render without a cluster")
	}
	funcs["tpl"] = func(...interface{}) (string, error) {
		return "", fmt.Errorf("tpl is not supported by this checker")
	}
	root.Funcs(funcs)
	for _, t := range c.template {
		if _, err := root.New(name + "/" + t).Parse(c.files[t]); err != nil {
			return nil, err
		}
	}
	chartObj := map[string]interface{}{}
	for k, v := range c.meta { // Helm exposes Chart.yaml fields capitalised
		chartObj[strings.ToUpper(k[:1])+k[1:]] = v
	}
	out := map[string]string{}
	for _, t := range c.template {
		base := filepath.Base(t)
		if strings.HasPrefix(base, "_") {
			continue
		}
		data := map[string]interface{}{
			"Values":  values,
			"Chart":   chartObj,
			"Release": map[string]interface{}{"Name": releaseName, "Namespace": namespace, "Service": "Helm", "IsInstall": true, "IsUpgrade": false, "Revision": 1},
			"Capabilities": map[string]interface{}{
				"KubeVersion": map[string]interface{}{"Version": "v1.29.0", "Major": "1", "Minor": "29"},
			},
			"Template": map[string]interface{}{"Name": name + "/" + t, "BasePath": name + "/templates"},
			"Files":    files(c.files),
		}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, name+"/"+t, data); err != nil {
			return nil, err
		}
		out[name+"/"+t] = strings.ReplaceAll(buf.String(), "<no value>", "")
	}
	return out, nil
}

// documents splits rendered manifests into YAML documents, leaving out empty ones (a template whose
// condition is off). Each comes with the template it came from.
type document struct {
	source string
	text   string
	obj    map[string]interface{}
}

func documents(rendered map[string]string) ([]document, error) {
	var names []string
	for n := range rendered {
		if strings.HasSuffix(n, ".yaml") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var docs []document
	for _, n := range names {
		for _, part := range splitYAML(rendered[n]) {
			var obj map[string]interface{}
			if err := yaml.Unmarshal([]byte(part), &obj); err != nil {
				return nil, fmt.Errorf("%s: rendered YAML does not parse: %v\n%s", n, err, part)
			}
			if obj == nil {
				continue
			}
			docs = append(docs, document{source: n, text: part, obj: obj})
		}
	}
	return docs, nil
}

func splitYAML(s string) []string {
	var parts []string
	var cur []string
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimRight(line, " ") == "---" {
			parts = append(parts, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return append(parts, strings.Join(cur, "\n"))
}
