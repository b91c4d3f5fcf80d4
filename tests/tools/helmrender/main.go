// helmrender renders a Helm v3 chart without the helm binary, the way `helm template` does,
// with the same template engine (Go's text/template), the same function library (sprig v3 plus
// Helm's own functions) and the same YAML library for values and toYaml (sigs.k8s.io/yaml), all
// from Debian packages. It exists because helm itself cannot be installed where krc's CI runs.
//
//	helmrender [--name NAME] [--namespace NS] [-f values.yaml]... [--set a.b=v]...
//	           [--set-string a.b=v]... [--strict] [--notes FILE] [--kube-version 1.30.0]
//	           [--api-versions group/version]... CHART_DIR
//
// What it does, as Helm does it:
//   - Chart.yaml: apiVersion v2 required, name, a SemVer 2 version, type application|library,
//     kubeVersion checked against --kube-version (default 1.30.0).
//   - values: the chart's values.yaml, then each -f file, then --set/--set-string, coalesced as
//     Helm does (maps merged key by key, a null deletes the key). Values files are read with
//     sigs.k8s.io/yaml, so numbers are float64, exactly as in Helm (1000000 prints as 1e+06).
//   - templates: every file under templates/ is parsed into one template set; files whose name
//     starts with "_" are partials and produce no output; NOTES.txt is rendered on its own.
//     missingkey=zero ("<no value>" removed from the output), or missingkey=error with --strict
//     (as `helm lint --strict`).
//   - objects: .Values, .Release (Name, Namespace, Service "Helm", IsInstall, IsUpgrade,
//     Revision), .Chart (the Chart.yaml fields), .Template (Name, BasePath), .Capabilities
//     (KubeVersion, APIVersions.Has with the built-in v1 groups plus --api-versions,
//     HelmVersion), .Files (Get, GetBytes, Glob-less: only named files of the chart).
//   - functions: sprig's TxtFuncMap without env/expandenv, plus include (with Helm's recursion
//     limit), tpl, required, fail, toYaml, fromYaml, fromYamlArray, toJson, fromJson,
//     fromJsonArray, and lookup returning an empty map (as `helm template` without a cluster).
//   - output: each template split into documents on "---" lines, empty documents dropped (also
//     those with only comments or a stray "---", which helm prints and kubectl skips), each
//     printed as "---\n# Source: CHART/templates/FILE" followed by the document.
//
// Checks it adds: every output document must parse as YAML (sigs.k8s.io/yaml, as Helm's manifest
// sorter does) and must have no duplicate mapping keys (gopkg.in/yaml.v3), and must carry
// apiVersion, kind and metadata.name.
//
// What it does not do: subcharts and dependencies, hooks (rendered as plain documents), the
// values.schema.json check, helm lint's other rules, install-order sorting, toToml, .Files.Glob/
// AsConfig/AsSecrets, and anything that talks to a cluster.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/ioutil"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/semver"
	"github.com/Masterminds/sprig"
	yaml3 "gopkg.in/yaml.v3"
	"sigs.k8s.io/yaml"
)

// Metadata mirrors helm's chart.Metadata (the .Chart object): same exported field names.
type Metadata struct {
	Name         string            `json:"name,omitempty"`
	Home         string            `json:"home,omitempty"`
	Sources      []string          `json:"sources,omitempty"`
	Version      string            `json:"version,omitempty"`
	Description  string            `json:"description,omitempty"`
	Keywords     []string          `json:"keywords,omitempty"`
	Maintainers  []interface{}     `json:"maintainers,omitempty"`
	Icon         string            `json:"icon,omitempty"`
	APIVersion   string            `json:"apiVersion,omitempty"`
	Condition    string            `json:"condition,omitempty"`
	Tags         string            `json:"tags,omitempty"`
	AppVersion   string            `json:"appVersion,omitempty"`
	Deprecated   bool              `json:"deprecated,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	KubeVersion  string            `json:"kubeVersion,omitempty"`
	Dependencies []interface{}     `json:"dependencies,omitempty"`
	Type         string            `json:"type,omitempty"`
}

// VersionSet mirrors chartutil.VersionSet.
type VersionSet []string

// Has is .Capabilities.APIVersions.Has "group/version" (or "group/version/Kind").
func (v VersionSet) Has(apiVersion string) bool {
	for _, x := range v {
		if x == apiVersion {
			return true
		}
	}
	return false
}

// KubeVersion mirrors chartutil.KubeVersion.
type KubeVersion struct {
	Version string
	Major   string
	Minor   string
}

func (kv *KubeVersion) String() string     { return kv.Version }
func (kv *KubeVersion) GitVersion() string { return kv.Version }

// Capabilities mirrors chartutil.Capabilities.
type Capabilities struct {
	KubeVersion KubeVersion
	APIVersions VersionSet
	HelmVersion map[string]string
}

// Files is a minimal .Files: Get and GetBytes of files inside the chart directory.
type Files struct{ root string }

func (f Files) GetBytes(name string) []byte {
	clean := path.Clean("/" + name)
	b, err := ioutil.ReadFile(filepath.Join(f.root, filepath.FromSlash(clean)))
	if err != nil {
		return []byte{}
	}
	return b
}

func (f Files) Get(name string) string { return string(f.GetBytes(name)) }

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func die(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "helmrender: "+format+"\n", a...)
	os.Exit(1)
}

// readValues parses a values document as Helm's chartutil.ReadValues does.
func readValues(data []byte) (map[string]interface{}, error) {
	vals := map[string]interface{}{}
	if err := yaml.Unmarshal(data, &vals); err != nil {
		return nil, err
	}
	if vals == nil {
		vals = map[string]interface{}{}
	}
	return vals, nil
}

// coalesce merges src over dst as Helm's chartutil.CoalesceTables: maps merge key by key, a
// null in src deletes the key, anything else in src replaces dst.
func coalesce(dst, src map[string]interface{}) map[string]interface{} {
	if dst == nil {
		dst = map[string]interface{}{}
	}
	for k, sv := range src {
		if sv == nil {
			delete(dst, k)
			continue
		}
		dv, exists := dst[k]
		sm, sIsMap := sv.(map[string]interface{})
		dm, dIsMap := dv.(map[string]interface{})
		if exists && sIsMap && dIsMap {
			dst[k] = coalesce(dm, sm)
		} else {
			if sIsMap {
				sv = coalesce(map[string]interface{}{}, sm)
			}
			dst[k] = sv
		}
	}
	return dst
}

var intRe = regexp.MustCompile(`^[-+]?(0|[1-9][0-9]*)$`)

// typed converts a --set value the way Helm's strvals parser does for the simple cases.
func typed(v string, asString bool) interface{} {
	if asString {
		return v
	}
	if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
		out := []interface{}{}
		inner := strings.TrimSuffix(strings.TrimPrefix(v, "{"), "}")
		if inner != "" {
			for _, p := range strings.Split(inner, ",") {
				out = append(out, typed(p, false))
			}
		}
		return out
	}
	switch v {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	if intRe.MatchString(v) {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return v
}

// setValue applies one --set a.b.c=value (no list indexes, no escaped dots).
func setValue(vals map[string]interface{}, expr string, asString bool) error {
	for _, part := range splitSet(expr) {
		eq := strings.Index(part, "=")
		if eq <= 0 {
			return fmt.Errorf("--set %q: expected key=value", part)
		}
		keys := strings.Split(part[:eq], ".")
		m := vals
		for i, k := range keys {
			if k == "" || strings.ContainsAny(k, "[]") {
				return fmt.Errorf("--set %q: unsupported key (only a.b.c)", part)
			}
			if i == len(keys)-1 {
				m[k] = typed(part[eq+1:], asString)
				break
			}
			next, ok := m[k].(map[string]interface{})
			if !ok {
				next = map[string]interface{}{}
				m[k] = next
			}
			m = next
		}
	}
	return nil
}

// splitSet splits "a=1,b={x,y}" on commas outside braces.
func splitSet(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func toYAML(v interface{}) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

func fromYAML(str string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(str), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func fromYAMLArray(str string) []interface{} {
	a := []interface{}{}
	if err := yaml.Unmarshal([]byte(str), &a); err != nil {
		a = []interface{}{err.Error()}
	}
	return a
}

func toJSON(v interface{}) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}

func fromJSON(str string) map[string]interface{} {
	m := make(map[string]interface{})
	if err := json.Unmarshal([]byte(str), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func fromJSONArray(str string) []interface{} {
	a := []interface{}{}
	if err := json.Unmarshal([]byte(str), &a); err != nil {
		a = []interface{}{err.Error()}
	}
	return a
}

const recursionMax = 1000

type engine struct {
	t      *template.Template
	strict bool
}

func (e *engine) funcMap() template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	included := map[string]int{}
	f["toYaml"] = toYAML
	f["fromYaml"] = fromYAML
	f["fromYamlArray"] = fromYAMLArray
	f["toJson"] = toJSON
	f["fromJson"] = fromJSON
	f["fromJsonArray"] = fromJSONArray
	f["include"] = func(name string, data interface{}) (string, error) {
		var buf strings.Builder
		if included[name] > recursionMax {
			return "", fmt.Errorf("rendering template has a nested reference name: %s", name)
		}
		included[name]++
		err := e.t.ExecuteTemplate(&buf, name, data)
		included[name]--
		return buf.String(), err
	}
	f["tpl"] = func(text string, vals map[string]interface{}) (string, error) {
		t, err := e.t.Clone()
		if err != nil {
			return "", err
		}
		name := "tpl"
		if tm, ok := vals["Template"].(map[string]interface{}); ok {
			if n, ok := tm["Name"].(string); ok {
				name = n
			}
		}
		if _, err := t.New(name).Parse(text); err != nil {
			return "", fmt.Errorf("cannot parse template %q: %v", text, err)
		}
		var buf strings.Builder
		if err := t.ExecuteTemplate(&buf, name, vals); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %v", text, err)
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
	f["required"] = func(warn string, val interface{}) (interface{}, error) {
		if val == nil {
			return val, errors.New(warn)
		}
		if s, ok := val.(string); ok && s == "" {
			return val, errors.New(warn)
		}
		return val, nil
	}
	f["lookup"] = func(apiVersion, kind, namespace, name string) (map[string]interface{}, error) {
		return map[string]interface{}{}, nil
	}
	return f
}

var docSep = regexp.MustCompile(`(?:^|\s*\n)---\s*`)

func main() {
	var valueFiles, sets, setStrings, apiVersions listFlag
	release, namespace, kubeVersion, notesOut := "release-name", "default", "1.30.0", ""
	strict := false
	var chartDir string

	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 >= len(args) {
				die("%s needs a value", a)
			}
			i++
			return args[i]
		}
		switch a {
		case "-f", "--values":
			valueFiles.Set(next())
		case "--set":
			sets.Set(next())
		case "--set-string":
			setStrings.Set(next())
		case "--name":
			release = next()
		case "-n", "--namespace":
			namespace = next()
		case "--kube-version":
			kubeVersion = next()
		case "--api-versions":
			apiVersions.Set(next())
		case "--notes":
			notesOut = next()
		case "--strict":
			strict = true
		case "-h", "--help":
			fmt.Println("usage: helmrender [--name NAME] [--namespace NS] [-f FILE]... [--set k=v]... " +
				"[--set-string k=v]... [--strict] [--notes FILE] [--kube-version V] [--api-versions G/V]... CHART_DIR")
			return
		default:
			if strings.HasPrefix(a, "-") || chartDir != "" {
				die("unexpected argument %q (see --help)", a)
			}
			chartDir = a
		}
	}
	if chartDir == "" {
		die("no chart directory given")
	}

	// Chart.yaml
	raw, err := ioutil.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		die("%v", err)
	}
	var md Metadata
	if err := yaml.UnmarshalStrict(raw, &md); err != nil {
		die("Chart.yaml: %v", err)
	}
	if md.APIVersion != "v2" {
		die("Chart.yaml: apiVersion must be v2, not %q", md.APIVersion)
	}
	if md.Name == "" {
		die("Chart.yaml: name is required")
	}
	if _, err := semver.StrictNewVersion(md.Version); err != nil {
		die("Chart.yaml: version %q is not SemVer 2: %v", md.Version, err)
	}
	if md.Type != "" && md.Type != "application" && md.Type != "library" {
		die("Chart.yaml: type must be application or library, not %q", md.Type)
	}
	if md.Type == "library" {
		die("Chart.yaml: library charts are not rendered")
	}
	abs, err := filepath.Abs(chartDir)
	if err != nil {
		die("%v", err)
	}
	if base := filepath.Base(abs); base != md.Name {
		die("Chart.yaml: chart name %q must match its directory %q", md.Name, base)
	}
	if fi, err := os.Stat(filepath.Join(chartDir, "charts")); err == nil && fi.IsDir() {
		die("subcharts (charts/) are not supported by this renderer")
	}
	if len(md.Dependencies) > 0 {
		die("dependencies are not supported by this renderer")
	}

	// values
	vals := map[string]interface{}{}
	if raw, err := ioutil.ReadFile(filepath.Join(chartDir, "values.yaml")); err == nil {
		if vals, err = readValues(raw); err != nil {
			die("values.yaml: %v", err)
		}
	}
	for _, f := range valueFiles {
		raw, err := ioutil.ReadFile(f)
		if err != nil {
			die("%v", err)
		}
		user, err := readValues(raw)
		if err != nil {
			die("%s: %v", f, err)
		}
		vals = coalesce(vals, user)
	}
	for _, s := range sets {
		user := map[string]interface{}{}
		if err := setValue(user, s, false); err != nil {
			die("%v", err)
		}
		vals = coalesce(vals, user)
	}
	for _, s := range setStrings {
		user := map[string]interface{}{}
		if err := setValue(user, s, true); err != nil {
			die("%v", err)
		}
		vals = coalesce(vals, user)
	}

	kv, err := semver.NewVersion(kubeVersion)
	if err != nil {
		die("--kube-version %q: %v", kubeVersion, err)
	}
	if md.KubeVersion != "" {
		c, err := semver.NewConstraint(md.KubeVersion)
		if err != nil {
			die("Chart.yaml: kubeVersion %q: %v", md.KubeVersion, err)
		}
		if !c.Check(kv) {
			die("chart requires kubeVersion: %s which is incompatible with Kubernetes v%s", md.KubeVersion, kv)
		}
	}
	caps := &Capabilities{
		KubeVersion: KubeVersion{Version: "v" + kv.String(), Major: strconv.FormatUint(kv.Major(), 10),
			Minor: strconv.FormatUint(kv.Minor(), 10)},
		APIVersions: append(VersionSet{"v1", "apps/v1", "batch/v1", "policy/v1", "rbac.authorization.k8s.io/v1",
			"coordination.k8s.io/v1", "networking.k8s.io/v1", "storage.k8s.io/v1",
			"autoscaling/v2", "apiextensions.k8s.io/v1"}, apiVersions...),
		HelmVersion: map[string]string{"version": "v3.14.0"},
	}

	// templates
	tdir := filepath.Join(chartDir, "templates")
	var names []string
	err = filepath.Walk(tdir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() {
			rel, _ := filepath.Rel(chartDir, p)
			names = append(names, path.Join(md.Name, filepath.ToSlash(rel)))
		}
		return nil
	})
	if err != nil {
		die("%v", err)
	}
	sort.Strings(names)

	e := &engine{t: template.New("gotpl"), strict: strict}
	if strict {
		e.t.Option("missingkey=error")
	} else {
		e.t.Option("missingkey=zero")
	}
	e.t.Funcs(e.funcMap())
	for _, n := range names {
		text, err := ioutil.ReadFile(filepath.Join(chartDir, filepath.FromSlash(strings.TrimPrefix(n, md.Name+"/"))))
		if err != nil {
			die("%v", err)
		}
		if _, err := e.t.New(n).Parse(string(text)); err != nil {
			die("parse error in %s: %v", n, err)
		}
	}

	top := func(name string) map[string]interface{} {
		return map[string]interface{}{
			"Values": vals,
			"Release": map[string]interface{}{"Name": release, "Namespace": namespace, "Service": "Helm",
				"IsInstall": true, "IsUpgrade": false, "Revision": 1},
			"Chart":        &md,
			"Capabilities": caps,
			"Template":     map[string]interface{}{"Name": name, "BasePath": md.Name + "/templates"},
			"Files":        Files{root: chartDir},
		}
	}

	var out bytes.Buffer
	failed := false
	for _, n := range names {
		base := path.Base(n)
		if strings.HasPrefix(base, "_") {
			continue
		}
		var buf strings.Builder
		if err := e.t.ExecuteTemplate(&buf, n, top(n)); err != nil {
			die("render error in %s: %v", n, err)
		}
		text := strings.ReplaceAll(buf.String(), "<no value>", "")
		if base == "NOTES.txt" {
			if notesOut != "" {
				if err := ioutil.WriteFile(notesOut, []byte(text), 0o644); err != nil {
					die("%v", err)
				}
			}
			continue
		}
		for i, doc := range docSep.Split(text, -1) {
			if strings.TrimSpace(doc) == "" || isNullDoc(doc) {
				continue
			}
			if err := checkDoc(doc); err != nil {
				fmt.Fprintf(os.Stderr, "helmrender: %s (document %d): %v\n", n, i, err)
				failed = true
			}
			fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", n, strings.TrimRight(doc, " \t\n"))
		}
	}
	os.Stdout.Write(out.Bytes())
	if failed {
		os.Exit(1)
	}
}

// isNullDoc: only comments or a stray "---" (a document kubectl and helm install skip).
func isNullDoc(doc string) bool {
	var v interface{}
	return yaml3.Unmarshal([]byte(doc), &v) == nil && v == nil
}

// checkDoc: the document parses as YAML (as Helm's manifest sorter parses it), has no duplicate
// keys, and has apiVersion, kind and metadata.name.
func checkDoc(doc string) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   *struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
		return fmt.Errorf("YAML parse error: %v", err)
	}
	var any interface{}
	if err := yaml3.Unmarshal([]byte(doc), &any); err != nil {
		return fmt.Errorf("YAML error: %v", err)
	}
	if head.APIVersion == "" || head.Kind == "" {
		return errors.New("apiVersion or kind missing")
	}
	if head.Metadata == nil || head.Metadata.Name == "" {
		return errors.New("metadata.name missing")
	}
	return nil
}
