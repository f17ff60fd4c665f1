// Shape checks on rendered manifests: what a Kubernetes API server would reject, and what this chart
// promises (probes on /healthz and /readyz, secrets only by reference, the migration Job as a hook,
// selectors that match, references that resolve).
package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// The kinds the chart may render, with their apiVersion. A Secret is deliberately absent: the chart
// references Secrets the operator created and never writes one.
var allowedKinds = map[string]string{
	"ConfigMap":               "v1",
	"Service":                 "v1",
	"ServiceAccount":          "v1",
	"Deployment":              "apps/v1",
	"Job":                     "batch/v1",
	"PodDisruptionBudget":     "policy/v1",
	"HorizontalPodAutoscaler": "autoscaling/v2",
	"Ingress":                 "networking.k8s.io/v1",
	"ServiceMonitor":          "monitoring.coreos.com/v1",
	"PrometheusRule":          "monitoring.coreos.com/v1",
	"Pod":                     "v1", // the `helm test` hook only
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Names of environment variables and ConfigMap keys that carry credentials.
var secretName = regexp.MustCompile(`(?i)(PASSWORD|SECRET|TOKEN|DATABASE_URL|SERVER_KEY$|ACCESS_KEY)`)

// Values that look like credentials wherever they appear in a manifest.
var secretValue = []*regexp.Regexp{
	regexp.MustCompile(`postgres(ql)?://[^/\s:@]+:[^@\s]+@`), // a URL with a password
	regexp.MustCompile(`\b[0-9a-fA-F]{64}\b`),                // a 256-bit key in hex
	regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`), // a PEM key
	regexp.MustCompile(`key\s*=\s*[A-Za-z0-9+/]{38}==`),      // a cephx key
	regexp.MustCompile(`(?i)aws_secret_access_key`),          // an S3 secret
}

type checker struct {
	docs []document
	errs []string
}

func (c *checker) fail(d *document, format string, args ...interface{}) {
	where := "chart"
	if d != nil {
		where = fmt.Sprintf("%s (%s %s)", d.source, str(d.obj, "kind"), str(d.obj, "metadata", "name"))
	}
	c.errs = append(c.errs, where+": "+fmt.Sprintf(format, args...))
}

// get walks maps by key and lists by index ("0").
func get(v interface{}, path ...string) interface{} {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]interface{}:
			v = x[p]
		case []interface{}:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func str(v interface{}, path ...string) string {
	s, _ := get(v, path...).(string)
	return s
}

func list(v interface{}, path ...string) []interface{} {
	l, _ := get(v, path...).([]interface{})
	return l
}

func dict(v interface{}, path ...string) map[string]interface{} {
	m, _ := get(v, path...).(map[string]interface{})
	return m
}

func (c *checker) byKind(kind string) []*document {
	var out []*document
	for i := range c.docs {
		if str(c.docs[i].obj, "kind") == kind {
			out = append(out, &c.docs[i])
		}
	}
	return out
}

func subset(sel, labels map[string]interface{}) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if fmt.Sprint(labels[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

func (c *checker) run(v map[string]interface{}) {
	names := map[string]bool{}
	for i := range c.docs {
		d := &c.docs[i]
		kind, api, name := str(d.obj, "kind"), str(d.obj, "apiVersion"), str(d.obj, "metadata", "name")
		want, ok := allowedKinds[kind]
		switch {
		case kind == "Secret":
			c.fail(d, "the chart must reference Secrets, never render one")
		case !ok:
			c.fail(d, "unexpected kind %q", kind)
		case api != want:
			c.fail(d, "apiVersion is %q, want %q", api, want)
		}
		if name == "" || len(name) > 63 || !dnsLabel.MatchString(name) {
			c.fail(d, "metadata.name %q is not a DNS label", name)
		}
		if names[kind+"/"+name] {
			c.fail(d, "rendered twice")
		}
		names[kind+"/"+name] = true
		labels := dict(d.obj, "metadata", "labels")
		for _, l := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "helm.sh/chart"} {
			if labels[l] == nil {
				c.fail(d, "label %s missing", l)
			}
		}
		// checksum/* annotations are sha256 digests (64 hex characters) of the chart's own files.
		var scanned []string
		for _, line := range strings.Split(d.text, "\n") {
			if !strings.Contains(line, "checksum/") {
				scanned = append(scanned, line)
			}
		}
		for _, re := range secretValue {
			if m := re.FindString(strings.Join(scanned, "\n")); m != "" {
				c.fail(d, "contains what looks like a credential (%.20s...)", m)
			}
		}
	}

	deployments := c.byKind("Deployment")
	if len(deployments) != 1 {
		c.fail(nil, "want exactly one Deployment, got %d", len(deployments))
		return
	}
	dep := deployments[0]
	podLabels := dict(dep.obj, "spec", "template", "metadata", "labels")
	c.checkDeployment(dep, v)
	configMaps := map[string]map[string]interface{}{}
	for _, cm := range c.byKind("ConfigMap") {
		configMaps[str(cm.obj, "metadata", "name")] = dict(cm.obj, "data")
		for k := range dict(cm.obj, "data") {
			if secretName.MatchString(k) {
				c.fail(cm, "key %s holds a credential: it belongs in a referenced Secret", k)
			}
		}
	}
	c.checkPodSpec(dep, dict(dep.obj, "spec", "template", "spec"), configMaps, v)

	for _, s := range c.byKind("Service") {
		if !subset(dict(s.obj, "spec", "selector"), podLabels) {
			c.fail(s, "selector does not select the Deployment's pods")
		}
	}
	for _, p := range c.byKind("PodDisruptionBudget") {
		if !subset(dict(p.obj, "spec", "selector", "matchLabels"), podLabels) {
			c.fail(p, "selector does not select the Deployment's pods")
		}
		if get(p.obj, "spec", "maxUnavailable") == nil && get(p.obj, "spec", "minAvailable") == nil {
			c.fail(p, "neither maxUnavailable nor minAvailable")
		}
	}
	hpas := c.byKind("HorizontalPodAutoscaler")
	for _, h := range hpas {
		if str(h.obj, "spec", "scaleTargetRef", "kind") != "Deployment" || str(h.obj, "spec", "scaleTargetRef", "name") != str(dep.obj, "metadata", "name") {
			c.fail(h, "scaleTargetRef does not name the Deployment")
		}
		min, _ := number(get(h.obj, "spec", "minReplicas"))
		max, _ := number(get(h.obj, "spec", "maxReplicas"))
		if min < 1 || max < min {
			c.fail(h, "replica bounds %v..%v", min, max)
		}
	}
	if len(hpas) > 0 && get(dep.obj, "spec", "replicas") != nil {
		c.fail(dep, "spec.replicas is set although an HPA scales the Deployment")
	}
	services := c.byKind("Service")
	servicePorts := func(s *document) map[string]bool {
		ports := map[string]bool{}
		for _, p := range list(s.obj, "spec", "ports") {
			ports[str(p, "name")] = true
		}
		return ports
	}
	for _, m := range c.byKind("ServiceMonitor") {
		found := false
		for _, s := range services {
			if subset(dict(m.obj, "spec", "selector", "matchLabels"), dict(s.obj, "metadata", "labels")) {
				found = true
				for _, e := range list(m.obj, "spec", "endpoints") {
					if !servicePorts(s)[str(e, "port")] {
						c.fail(m, "endpoint port %q is not a port of Service %s", str(e, "port"), str(s.obj, "metadata", "name"))
					}
					if str(e, "path") != "/metrics" {
						c.fail(m, "endpoint path is %q, want /metrics", str(e, "path"))
					}
				}
			}
		}
		if !found {
			c.fail(m, "selects no Service of the chart")
		}
	}
	for _, ing := range c.byKind("Ingress") {
		for _, r := range list(ing.obj, "spec", "rules") {
			for _, p := range list(r, "http", "paths") {
				svc, port := str(p, "backend", "service", "name"), str(p, "backend", "service", "port", "name")
				ok := false
				for _, s := range services {
					if str(s.obj, "metadata", "name") == svc && servicePorts(s)[port] {
						ok = true
					}
				}
				if !ok {
					c.fail(ing, "backend %s:%s is not a Service port of the chart", svc, port)
				}
			}
		}
	}
	for _, m := range c.byKind("ServiceMonitor") {
		want := dict(v, "metrics", "serviceMonitor", "tlsConfig")
		for _, e := range list(m.obj, "spec", "endpoints") {
			if got := dict(e, "tlsConfig"); fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
				c.fail(m, "endpoint tlsConfig is %v, want metrics.serviceMonitor.tlsConfig %v", got, want)
			}
		}
	}
	c.checkMetricsToken(dep)
	c.checkMigrationJob(v, configMaps)
	c.checkDepotdSettings(dep, v, configMaps)
	c.checkConsole(dep, v, configMaps)
	c.checkPrometheusRule(v)
	c.checkTestPod(dep, v)
	for _, cm := range c.byKind("ConfigMap") {
		if s, ok := dict(cm.obj, "data")["depot.json"].(string); ok {
			c.checkDashboard(cm, s)
		}
	}
}

func (c *checker) checkDeployment(d *document, v map[string]interface{}) {
	sel := dict(d.obj, "spec", "selector", "matchLabels")
	if !subset(sel, dict(d.obj, "spec", "template", "metadata", "labels")) {
		c.fail(d, "spec.selector.matchLabels does not match the pod template's labels")
	}
	if str(d.obj, "spec", "strategy", "type") != "RollingUpdate" {
		c.fail(d, "strategy is not RollingUpdate")
	}
	if r, ok := number(get(d.obj, "spec", "replicas")); get(d.obj, "spec", "replicas") != nil && (!ok || r < 1) {
		c.fail(d, "spec.replicas must be a positive number")
	}
	grace, _ := number(get(d.obj, "spec", "template", "spec", "terminationGracePeriodSeconds"))
	shutdown, _ := number(get(v, "config", "shutdownGraceSeconds"))
	if grace <= shutdown {
		c.fail(d, "terminationGracePeriodSeconds %v must exceed depotd's shutdown grace %v", grace, shutdown)
	}
	containers := list(d.obj, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		c.fail(d, "no containers")
		return
	}
	ctr := containers[0]
	ports := map[string]bool{}
	for _, p := range list(ctr, "ports") {
		ports[str(p, "name")] = true
	}
	for probe, path := range map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
		if got := str(ctr, probe, "httpGet", "path"); got != path {
			c.fail(d, "%s path is %q, want %s", probe, got, path)
		}
		port := fmt.Sprint(get(ctr, probe, "httpGet", "port"))
		if !ports[port] {
			c.fail(d, "%s port %q is not a named container port", probe, port)
		}
		if t, _ := number(get(ctr, probe, "timeoutSeconds")); t < 3 {
			c.fail(d, "%s timeoutSeconds %v is shorter than depotd's 2 s readiness bound plus margin", probe, t)
		}
	}
	if dict(ctr, "resources", "requests") == nil {
		c.fail(d, "container has no resource requests")
	}
}

// checkPodSpec: image, env by reference, volumes that resolve.
func (c *checker) checkPodSpec(d *document, spec map[string]interface{}, configMaps map[string]map[string]interface{}, v map[string]interface{}) {
	volumes := map[string]interface{}{}
	for _, vol := range list(spec, "volumes") {
		volumes[str(vol, "name")] = vol
		if cm := str(vol, "configMap", "name"); cm != "" {
			if _, ok := configMaps[cm]; !ok && cm != str(v, "storage", "rados", "existingConfigMap") {
				c.fail(d, "volume %s uses ConfigMap %s, which is neither rendered nor configured", str(vol, "name"), cm)
			}
		}
		if get(vol, "secret") != nil && str(vol, "secret", "secretName") == "" {
			c.fail(d, "volume %s references a Secret without a name", str(vol, "name"))
		}
	}
	for _, ctr := range list(spec, "containers") {
		if img := str(ctr, "image"); img == "" || strings.HasSuffix(img, ":") {
			c.fail(d, "container %s has no image tag: %q", str(ctr, "name"), img)
		}
		for _, e := range list(ctr, "env") {
			n := str(e, "name")
			if get(e, "value") != nil && secretName.MatchString(n) {
				c.fail(d, "env %s is inlined; it must come from a Secret (valueFrom.secretKeyRef)", n)
			}
			if secretName.MatchString(n) && (str(e, "valueFrom", "secretKeyRef", "name") == "" || str(e, "valueFrom", "secretKeyRef", "key") == "") {
				c.fail(d, "env %s does not reference a Secret key", n)
			}
		}
		for _, ef := range list(ctr, "envFrom") {
			if n := str(ef, "configMapRef", "name"); n != "" {
				if _, ok := configMaps[n]; !ok {
					c.fail(d, "envFrom ConfigMap %s is not rendered", n)
				}
			}
		}
		for _, m := range list(ctr, "volumeMounts") {
			if volumes[str(m, "name")] == nil {
				c.fail(d, "volumeMount %s has no volume", str(m, "name"))
			}
		}
	}
}

func (c *checker) checkMigrationJob(v map[string]interface{}, configMaps map[string]map[string]interface{}) {
	jobs := c.byKind("Job")
	enabled, _ := get(v, "migration", "enabled").(bool)
	if !enabled {
		if len(jobs) != 0 {
			c.fail(jobs[0], "rendered although migration.enabled is false")
		}
		return
	}
	if len(jobs) != 1 {
		c.fail(nil, "want one migration Job, got %d", len(jobs))
		return
	}
	j := jobs[0]
	ann := dict(j.obj, "metadata", "annotations")
	hooks := strings.Split(fmt.Sprint(ann["helm.sh/hook"]), ",")
	has := map[string]bool{}
	for _, h := range hooks {
		has[strings.TrimSpace(h)] = true
	}
	if !has["pre-install"] || !has["pre-upgrade"] {
		c.fail(j, "helm.sh/hook is %q, want pre-install and pre-upgrade", ann["helm.sh/hook"])
	}
	if !strings.Contains(fmt.Sprint(ann["helm.sh/hook-delete-policy"]), "before-hook-creation") {
		c.fail(j, "helm.sh/hook-delete-policy must include before-hook-creation (reruns replace the old Job)")
	}
	spec := dict(j.obj, "spec", "template", "spec")
	if rp := str(spec, "restartPolicy"); rp != "Never" && rp != "OnFailure" {
		c.fail(j, "restartPolicy %q", rp)
	}
	cmd := fmt.Sprint(get(spec, "containers", "0", "command"), get(spec, "containers", "0", "args"))
	if !strings.Contains(cmd, "migrate") {
		c.fail(j, "the Job does not run a migration: %s", cmd)
	}
	// A pre-install hook runs before the release's ConfigMaps exist: it may only use Secrets.
	for _, ef := range list(spec, "containers", "0", "envFrom") {
		if n := str(ef, "configMapRef", "name"); n != "" {
			c.fail(j, "a pre-install hook cannot use the release's ConfigMap %s", n)
		}
	}
	c.checkPodSpec(j, spec, configMaps, v)
	for i := range c.docs {
		if str(c.docs[i].obj, "kind") == "Deployment" {
			data := configMaps[str(get(c.docs[i].obj, "spec", "template", "spec", "containers", "0", "envFrom", "0", "configMapRef", "name"))]
			if data != nil && fmt.Sprint(data["DEPOT_MIGRATE"]) != "false" {
				c.fail(&c.docs[i], "pods must not migrate (DEPOT_MIGRATE=false) when the Job does")
			}
		}
	}
}

var metricName = regexp.MustCompile(`\b(depot_[a-z0-9_]+|process_[a-z_]+)\b`)

func (c *checker) checkDashboard(d *document, text string) {
	var dash map[string]interface{}
	if err := json.Unmarshal([]byte(text), &dash); err != nil {
		c.fail(d, "dashboard JSON does not parse: %v", err)
		return
	}
	panels := list(dash, "panels")
	if len(panels) == 0 {
		c.fail(d, "dashboard has no panels")
	}
	for _, p := range panels {
		if str(p, "type") == "row" {
			continue
		}
		targets := list(p, "targets")
		if len(targets) == 0 {
			c.fail(d, "panel %q has no query", str(p, "title"))
		}
		for _, t := range targets {
			expr := str(t, "expr")
			for _, m := range metricName.FindAllString(expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_count"), "_sum")
				if !knownMetrics[base] {
					c.fail(d, "panel %q queries %s, which depotd does not export", str(p, "title"), m)
				}
			}
		}
	}
}

// The series depotd exports, from tests/helm/metrics.txt (tests/e2e/test_metrics.py checks that a live
// depotd's /metrics has exactly those), so the dashboard cannot query a series that does not exist.
var knownMetrics = map[string]bool{}

// checkDepotdSettings: what the pods are told about the outside world.
func (c *checker) checkDepotdSettings(dep *document, v map[string]interface{}, configMaps map[string]map[string]interface{}) {
	data := configMaps[str(get(dep.obj, "spec", "template", "spec", "containers", "0", "envFrom", "0", "configMapRef", "name"))]
	publicURL := fmt.Sprint(data["DEPOT_PUBLIC_URL"])
	if ingress, _ := get(v, "ingress", "enabled").(bool); ingress {
		// Presigned links in webhook payloads must point where clients reach the installation.
		if !strings.HasPrefix(publicURL, "https://") && !strings.HasPrefix(publicURL, "http://") {
			c.fail(dep, "the Ingress is on but DEPOT_PUBLIC_URL is %q", publicURL)
		}
	}
	cidrs := list(v, "config", "webhookAllowCidrs")
	var want []string
	for _, x := range cidrs {
		want = append(want, fmt.Sprint(x))
	}
	if got := data["DEPOT_WEBHOOK_ALLOW_CIDR"]; len(want) > 0 && fmt.Sprint(got) != strings.Join(want, ",") {
		c.fail(dep, "DEPOT_WEBHOOK_ALLOW_CIDR is %v, want %q", got, strings.Join(want, ","))
	}
	if extra := dict(v, "config", "extraEnv"); extra["DEPOT_WEBHOOK_ALLOW_PRIVATE"] != nil && len(want) > 0 {
		c.fail(dep, "DEPOT_WEBHOOK_ALLOW_PRIVATE in extraEnv defeats config.webhookAllowCidrs")
	}
}

// checkMetricsToken: with a metrics token, depotd reads it from a Secret (DEPOT_METRICS_TOKEN) and every
// ServiceMonitor endpoint sends that same Secret key as its bearer token; without one, no endpoint sends a
// token depotd would not check.
func (c *checker) checkMetricsToken(dep *document) {
	var name, key string
	for _, e := range list(dep.obj, "spec", "template", "spec", "containers", "0", "env") {
		if str(e, "name") == "DEPOT_METRICS_TOKEN" {
			name, key = str(e, "valueFrom", "secretKeyRef", "name"), str(e, "valueFrom", "secretKeyRef", "key")
		}
	}
	for _, m := range c.byKind("ServiceMonitor") {
		for _, e := range list(m.obj, "spec", "endpoints") {
			gotName, gotKey := str(e, "bearerTokenSecret", "name"), str(e, "bearerTokenSecret", "key")
			if gotName != name || gotKey != key {
				c.fail(m, "endpoint bearerTokenSecret is %q/%q, but depotd reads DEPOT_METRICS_TOKEN from %q/%q",
					gotName, gotKey, name, key)
			}
		}
	}
}

// checkConsole: the web console listens on a port of its own (an origin apart from the objects S3 serves),
// the pods are told so, the Service exposes it, and an Ingress routes it only from hosts of its own.
func (c *checker) checkConsole(dep *document, v map[string]interface{}, configMaps map[string]map[string]interface{}) {
	data := configMaps[str(get(dep.obj, "spec", "template", "spec", "containers", "0", "envFrom", "0", "configMapRef", "name"))]
	port, _ := number(get(v, "config", "consolePort"))
	var containerPort interface{}
	for _, p := range list(dep.obj, "spec", "template", "spec", "containers", "0", "ports") {
		if str(p, "name") == "console" {
			containerPort = get(p, "containerPort")
		}
	}
	servicePort := false
	for _, s := range c.byKind("Service") {
		for _, p := range list(s.obj, "spec", "ports") {
			servicePort = servicePort || (str(p, "name") == "console" && str(p, "targetPort") == "console")
		}
	}
	listen := fmt.Sprint(data["DEPOT_CONSOLE_LISTEN"])
	if port > 0 {
		if want := fmt.Sprintf("0.0.0.0:%v", port); listen != want {
			c.fail(dep, "DEPOT_CONSOLE_LISTEN is %q, want %q", listen, want)
		}
		if got, _ := number(containerPort); got != port {
			c.fail(dep, "the console's container port is %v, want config.consolePort %v", containerPort, port)
		}
		if !servicePort {
			c.fail(dep, "no Service port named console targets the console's container port")
		}
	} else {
		if listen != "off" {
			c.fail(dep, "config.consolePort is 0 but DEPOT_CONSOLE_LISTEN is %q, want off", listen)
		}
		if containerPort != nil || servicePort {
			c.fail(dep, "config.consolePort is 0 but a console port is rendered")
		}
	}
	s3Hosts := map[string]bool{}
	for _, h := range list(v, "ingress", "hosts") {
		s3Hosts[str(h, "host")] = true
	}
	for _, ing := range c.byKind("Ingress") {
		for _, r := range list(ing.obj, "spec", "rules") {
			for _, p := range list(r, "http", "paths") {
				if str(p, "backend", "service", "port", "name") == "console" && s3Hosts[str(r, "host")] {
					c.fail(ing, "host %s routes to both S3 and the console: they must not share an origin", str(r, "host"))
				}
			}
		}
	}
}

// The alerts a PrometheusRule must carry, and the series they may query (tests/helm/metrics.txt).
var wantedAlerts = []string{"DepotBlobStoreUnavailable", "DepotWebhookQueueStuck", "DepotCollectorFailing",
	"DepotAuditSealLag", "DepotHigh5xxRatio"}

func (c *checker) checkPrometheusRule(v map[string]interface{}) {
	rules := c.byKind("PrometheusRule")
	enabled, _ := get(v, "metrics", "prometheusRule", "enabled").(bool)
	if enabled != (len(rules) == 1) {
		c.fail(nil, "metrics.prometheusRule.enabled is %v but %d PrometheusRule rendered", enabled, len(rules))
		return
	}
	seen := map[string]bool{}
	for _, r := range rules {
		for _, g := range list(r.obj, "spec", "groups") {
			for _, rule := range list(g, "rules") {
				name, expr := str(rule, "alert"), str(rule, "expr")
				seen[name] = true
				if expr == "" || str(rule, "labels", "severity") == "" || str(rule, "for") == "" {
					c.fail(r, "alert %s needs expr, for and labels.severity", name)
				}
				if str(rule, "annotations", "summary") == "" {
					c.fail(r, "alert %s has no summary", name)
				}
				for _, m := range metricName.FindAllString(expr, -1) {
					base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_count"), "_sum")
					if !knownMetrics[base] {
						c.fail(r, "alert %s queries %s, which depotd does not export", name, m)
					}
				}
				// Every selector names this release's series only.
				if strings.Count(expr, "{") != strings.Count(expr, "job=") {
					c.fail(r, "alert %s has a selector without the release's job: %s", name, expr)
				}
				if strings.Count(expr, "(") != strings.Count(expr, ")") || strings.Count(expr, "{") != strings.Count(expr, "}") {
					c.fail(r, "alert %s: unbalanced expression %s", name, expr)
				}
			}
		}
	}
	for _, a := range wantedAlerts {
		if len(rules) == 1 && !seen[a] {
			c.fail(rules[0], "alert %s missing", a)
		}
	}
}

// checkTestPod: the `helm test` smoke pod runs the release's image as the pods do, and only as a test hook.
func (c *checker) checkTestPod(dep *document, v map[string]interface{}) {
	pods := c.byKind("Pod")
	enabled, _ := get(v, "tests", "enabled").(bool)
	if enabled != (len(pods) == 1) {
		c.fail(nil, "tests.enabled is %v but %d test Pods rendered", enabled, len(pods))
		return
	}
	for _, p := range pods {
		if str(p.obj, "metadata", "annotations", "helm.sh/hook") != "test" {
			c.fail(p, "a Pod outside the Deployment must be a helm.sh/hook: test")
		}
		if str(p.obj, "spec", "restartPolicy") != "Never" {
			c.fail(p, "a test Pod must not restart")
		}
		want := str(dep.obj, "spec", "template", "spec", "containers", "0", "image")
		if got := str(p.obj, "spec", "containers", "0", "image"); got != want {
			c.fail(p, "test image %q is not the Deployment's %q", got, want)
		}
		if nonRoot, _ := get(p.obj, "spec", "securityContext", "runAsNonRoot").(bool); !nonRoot {
			c.fail(p, "the test Pod must run as non-root like the Deployment")
		}
		script := fmt.Sprint(get(p.obj, "spec", "containers", "0", "command"))
		for _, path := range []string{"/healthz"} {
			if !strings.Contains(script, path) {
				c.fail(p, "the smoke test does not check %s", path)
			}
		}
	}
}
