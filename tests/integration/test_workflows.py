"""The GitHub Actions workflows (.github/workflows) and where the release publishes:

- every workflow passes the schema check of @action-validator/cli (npm; scripts/setup-test
  installs it into tests/workflows, pinned by the lock file), and a deliberately broken one
  fails it;
- the actions are pinned to major versions and every job of the release asks only for the
  permissions it needs (id-token only where cosign signs, contents: write only where the GitHub
  release is made);
- the CI workflow runs .ci/run on push and pull request;
- the release workflow publishes the image and the chart where the chart's values.yaml, its
  Chart.yaml and the Kustomize base point (ghcr.io/kube-restart-collector/krc,
  oci://ghcr.io/kube-restart-collector/charts), for linux/amd64 and linux/arm64, with an SBOM and
  a keyless signature, and the version the chart and the Kustomize base name is krc's own.

No network: the validator is a local WebAssembly build of the schemas."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

import krc_harness as h
import yaml  # Debian python3-yaml

ROOT = h.ROOT
WORKFLOWS = os.path.join(ROOT, ".github", "workflows")
VALIDATOR = os.path.join(ROOT, "tests", "workflows", "node_modules", ".bin", "action-validator")
NPM_INSTALL = "npm ci --no-audit --no-fund --prefix tests/workflows"
IMAGE = "ghcr.io/kube-restart-collector/krc"
CHART_REPO = "oci://ghcr.io/kube-restart-collector/charts"


def workflow_files():
    return sorted(os.path.join(WORKFLOWS, f) for f in os.listdir(WORKFLOWS)
                  if f.endswith((".yml", ".yaml")))


def load(name):
    with open(os.path.join(WORKFLOWS, name)) as f:
        text = f.read()
    # PyYAML reads the key `on` as the boolean True (YAML 1.1)
    doc = yaml.safe_load(text)
    if True in doc:
        doc["on"] = doc.pop(True)
    return text, doc


def validate(path):
    return subprocess.run([VALIDATOR, path], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"^project\(krc VERSION ([0-9.]+) ", f.read(), re.M).group(1)


class SchemaTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if shutil.which("node") is None:
            raise AssertionError("node is not installed (apt-get install nodejs)")
        if not os.path.exists(VALIDATOR):
            raise AssertionError("%s is missing: run `%s` from the repository root "
                                 "(scripts/setup-test does)" % (VALIDATOR, NPM_INSTALL))

    def test_every_workflow_passes(self):
        files = workflow_files()
        self.assertEqual([os.path.basename(f) for f in files], ["ci.yml", "release.yml"])
        for path in files:
            with self.subTest(os.path.basename(path)):
                p = validate(path)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_broken_workflows_fail(self):
        _, ci = load("ci.yml")
        with tempfile.TemporaryDirectory() as tmp:
            for what, change in (
                    ("a misspelled key", lambda d: d["jobs"]["test"].update(
                        {"step": d["jobs"]["test"].pop("steps")})),
                    ("a job without runs-on", lambda d: d["jobs"]["test"].pop("runs-on")),
                    ("an unknown permission", lambda d: d.update(
                        {"permissions": {"contents": "read", "secrets": "write"}})),
                    ("a step with uses and run", lambda d: d["jobs"]["test"]["steps"][1].update(
                        {"run": "true"}))):
                with self.subTest(what):
                    doc = yaml.safe_load(yaml.safe_dump(ci))
                    change(doc)
                    path = os.path.join(tmp, "broken.yml")
                    with open(path, "w") as f:
                        yaml.safe_dump(doc, f)
                    p = validate(path)
                    self.assertNotEqual(p.returncode, 0, "%s passed:\n%s" % (what, p.stdout))
                    self.assertIn('"errors"', p.stdout + p.stderr)


class PinsAndPermissionsTest(unittest.TestCase):
    def test_actions_pinned_to_major_versions(self):
        for path in workflow_files():
            with open(path) as f:
                uses = re.findall(r"^\s*(?:-\s+)?uses:\s*(\S+)", f.read(), re.M)
            self.assertTrue(uses)
            for u in uses:
                self.assertRegex(u, r"^[\w.-]+/[\w.-]+@v[0-9]+$", os.path.basename(path))

    def test_release_jobs_ask_for_what_they_need(self):
        _, doc = load("release.yml")
        self.assertEqual(doc["permissions"], {}, "no default permissions for the jobs")
        want = {
            "version": {"contents": "read"},
            "image": {"contents": "read", "packages": "write", "id-token": "write"},
            "chart": {"contents": "read", "packages": "write"},
            "binaries": {"contents": "read"},
            "github-release": {"contents": "write"},
        }
        self.assertEqual({name: job.get("permissions") for name, job in doc["jobs"].items()}, want)

    def test_ci_runs_the_ci_command_on_push_and_pull_request(self):
        _, doc = load("ci.yml")
        self.assertEqual(set(doc["on"]), {"push", "pull_request"})
        self.assertEqual(doc["permissions"], {"contents": "read"})
        job = doc["jobs"]["test"]
        self.assertEqual(job["container"]["image"], "debian:bookworm")
        self.assertEqual(job["steps"][-1]["run"], "bash .ci/run")


class PublishedWhereTheChartPointsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.text, cls.doc = load("release.yml")
        cls.steps = {name: job["steps"] for name, job in cls.doc["jobs"].items()}

    def step(self, job, uses=None, run=None):
        for s in self.steps[job]:
            if (uses and s.get("uses", "").startswith(uses)) or (run and run in s.get("run", "")):
                return s
        raise AssertionError("job %s has no step %s" % (job, uses or run))

    def test_on_version_tags(self):
        self.assertEqual(self.doc["on"], {"push": {"tags": ["v*"]}})

    def test_image(self):
        self.assertEqual(self.doc["env"]["IMAGE"], IMAGE)
        build = self.step("image", uses="docker/build-push-action")["with"]
        self.assertEqual(build["platforms"], "linux/amd64,linux/arm64")
        self.assertIs(build["push"], True)
        self.assertIs(build["sbom"], True)
        self.assertIn("KRC_VERSION=${{ needs.version.outputs.version }}", build["build-args"])
        self.step("image", uses="docker/setup-qemu-action")
        self.step("image", uses="docker/setup-buildx-action")
        # tags: X.Y.Z (what the chart's appVersion names) and vX.Y.Z
        tags = self.step("image", uses="docker/metadata-action")["with"]["tags"]
        self.assertIn("type=semver,pattern={{version}}", tags)
        self.assertIn("type=ref,event=tag", tags)
        # keyless: the cosign-installer, then `cosign sign --yes` on the pushed digest
        self.step("image", uses="sigstore/cosign-installer")
        sign = self.step("image", run="cosign sign")
        self.assertIn('cosign sign --yes "${IMAGE}@${DIGEST}"', sign["run"])
        self.assertEqual(sign["env"]["DIGEST"], "${{ steps.build.outputs.digest }}")
        self.assertNotIn("--key", sign["run"])

    def test_chart(self):
        self.assertEqual(self.doc["env"]["CHART_REPO"], CHART_REPO)
        run = self.step("chart", run="helm push")["run"]
        self.assertIn('helm package deploy/helm/krc --version "$VERSION" --app-version "$VERSION"',
                      run)
        self.assertIn('helm push "dist/krc-$VERSION.tgz" "$CHART_REPO"', run)

    def test_binaries(self):
        self.assertEqual(self.doc["jobs"]["binaries"]["strategy"]["matrix"]["arch"],
                         ["amd64", "arm64"])
        self.assertIn("cmake/toolchain-aarch64-linux-gnu.cmake",
                      self.step("binaries", run="cmake --build")["run"])
        rel = self.step("github-release", uses="softprops/action-gh-release")["with"]["files"]
        self.assertIn("dist/SHA256SUMS", rel)
        self.assertIn("sha256sum krc-* > SHA256SUMS", self.step("github-release",
                                                                 run="sha256sum")["run"])

    def test_the_chart_and_kustomize_point_at_the_release(self):
        version = project_version()
        with open(os.path.join(ROOT, "deploy", "helm", "krc", "values.yaml")) as f:
            values = yaml.safe_load(f)
        with open(os.path.join(ROOT, "deploy", "helm", "krc", "Chart.yaml")) as f:
            chart = yaml.safe_load(f)
        with open(os.path.join(ROOT, "deploy", "manifests", "kustomization.yaml")) as f:
            kust_text = f.read()
        kust = yaml.safe_load(kust_text)
        self.assertEqual(values["image"]["repository"], IMAGE)
        self.assertEqual(values["image"]["tag"], "", "the tag defaults to appVersion")
        self.assertEqual(chart["appVersion"], version)
        self.assertEqual(kust["images"], [{"name": IMAGE, "newTag": version}])
        self.assertNotIn("placeholder", kust_text)


if __name__ == "__main__":
    h.main()
