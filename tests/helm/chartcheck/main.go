// chartcheck renders the Helm chart with each values file of a directory (scenarios) and checks the
// manifests' shape; scenarios whose first lines say "# expect-error: TEXT" must instead fail with an
// error containing TEXT (a missing required Secret, a value the schema rejects). Helm is not packaged
// in Debian; Go's text/template and Sprig, which Helm renders with, are.
//
//	chartcheck -chart helm/depot -values tests/helm/values -metrics tests/helm/metrics.txt \
//	    [-out DIR] [-junit FILE]
//
// -out writes each scenario's manifests to DIR/<scenario>.yaml (for yamllint). Exits 1 if any scenario
// failed.
package main

import (
	"bufio"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

type scenario struct {
	name      string
	overrides map[string]interface{}
	expectErr string
}

func loadScenarios(dir string) ([]scenario, error) {
	out := []scenario{{name: "defaults", overrides: map[string]interface{}{}}}
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		s := scenario{name: strings.TrimSuffix(filepath.Base(p), ".yaml"), overrides: map[string]interface{}{}}
		if err := yaml.Unmarshal(data, &s.overrides); err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		if s.overrides == nil {
			s.overrides = map[string]interface{}{}
		}
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "# expect-error:") {
				s.expectErr = strings.TrimSpace(strings.TrimPrefix(line, "# expect-error:"))
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// runScenario returns the problems found, and the rendered manifests.
func runScenario(c *chart, s scenario) ([]string, string) {
	values := mergeValues(c.values, s.overrides)
	if c.schema != nil {
		if errs := validate(c.schema, values, "values"); len(errs) > 0 {
			return errs, ""
		}
	}
	rendered, err := c.render(values, "prod", "storage")
	if err != nil {
		return []string{"render: " + err.Error()}, ""
	}
	docs, err := documents(rendered)
	if err != nil {
		return []string{err.Error()}, ""
	}
	var all []string
	for _, d := range docs {
		all = append(all, "# Source: "+d.source+"\n"+strings.Trim(d.text, "\n"))
	}
	ck := &checker{docs: docs}
	ck.run(values)
	return ck.errs, "---\n" + strings.Join(all, "\n---\n") + "\n"
}

type junitCase struct {
	Name    string  `xml:"name,attr"`
	Failure *string `xml:"failure,omitempty"`
}

type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

func main() {
	chartDir := flag.String("chart", "helm/depot", "chart directory")
	valuesDir := flag.String("values", "tests/helm/values", "directory of scenario values files")
	metricsFile := flag.String("metrics", "tests/helm/metrics.txt", "metric families depotd exports")
	outDir := flag.String("out", "", "write rendered manifests here")
	junit := flag.String("junit", "", "write a JUnit XML report here")
	flag.Parse()

	data, err := os.ReadFile(*metricsFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			knownMetrics[line] = true
		}
	}
	c, err := loadChart(*chartDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chartcheck:", err)
		os.Exit(2)
	}
	scenarios, err := loadScenarios(*valuesDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chartcheck:", err)
		os.Exit(2)
	}
	suite := junitSuite{Name: "chart"}
	for _, s := range scenarios {
		errs, manifests := runScenario(c, s)
		var problem string
		switch {
		case s.expectErr == "" && len(errs) > 0:
			problem = strings.Join(errs, "\n")
		case s.expectErr != "":
			found := false
			for _, e := range errs {
				found = found || strings.Contains(e, s.expectErr)
			}
			if !found {
				problem = fmt.Sprintf("expected an error containing %q, got: %v", s.expectErr, errs)
			}
		}
		tc := junitCase{Name: s.name}
		if problem != "" {
			fmt.Printf("FAIL %s\n  %s\n", s.name, strings.ReplaceAll(problem, "\n", "\n  "))
			tc.Failure = &problem
			suite.Failures++
		} else if s.expectErr != "" {
			fmt.Printf("ok   %s (rejected: %s)\n", s.name, s.expectErr)
		} else {
			fmt.Printf("ok   %s (%d documents)\n", s.name, strings.Count(manifests, "\n---\n")+1)
		}
		if *outDir != "" && manifests != "" {
			if err := os.WriteFile(filepath.Join(*outDir, s.name+".yaml"), []byte(manifests), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
		suite.Cases = append(suite.Cases, tc)
		suite.Tests++
	}
	if *junit != "" {
		out, _ := xml.MarshalIndent(suite, "", "  ")
		if err := os.WriteFile(*junit, append(out, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if suite.Failures > 0 {
		os.Exit(1)
	}
}
