"""The chart's optional PrometheusRule (prometheusRule.enabled): off by default; when on, the
rules it renders pass `promtool check rules`, and `promtool test rules` on synthetic series of
the destination metrics proves that KrcDestinationFailing fires after 10 minutes of failures
(naming the destination and its kind), not before, and not when a success follows the failure.
promtool: PATH, else .test-tools/prometheus (scripts/setup-test unpacks Debian's package)."""

import os
import subprocess
import tempfile
import unittest

import krc_harness as h
import test_deploy_yaml as d
import yaml
from test_metrics_promtool import prometheus_tool

SUMMARY = "krc cannot deliver to destination {dest} ({kind})"


def rule_groups(values):
    rules = d.by_kind(d.render(values), "PrometheusRule")
    assert len(rules) == 1, rules
    return rules[0]


class PrometheusRuleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.promtool = prometheus_tool("promtool")
        if cls.promtool is None:
            raise AssertionError("promtool not found (PATH or .test-tools/prometheus, where "
                                 "scripts/setup-test unpacks it)")

    def promtool_run(self, *args):
        return subprocess.run([self.promtool] + list(args), capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL)

    def test_off_by_default(self):
        self.assertEqual(d.by_kind(d.render_set("default"), "PrometheusRule"), [])

    def test_object(self):
        extra = {"alert": "KrcDown", "expr": "up{job=\"krc\"} == 0", "for": "5m"}
        rule = rule_groups({"prometheusRule": {"enabled": True, "labels": {"release": "prom"},
                                               "extraRules": [extra]}})
        self.assertEqual(rule["apiVersion"], "monitoring.coreos.com/v1")
        self.assertEqual(rule["metadata"]["namespace"], d.NAMESPACE)
        self.assertEqual(rule["metadata"]["labels"]["release"], "prom")
        rules = rule["spec"]["groups"][0]["rules"]
        self.assertEqual([r["alert"] for r in rules], ["KrcDestinationFailing", "KrcDown"])
        self.assertEqual(rules[0]["expr"], "krc_destination_last_failure_timestamp_seconds > "
                                           "krc_destination_last_success_timestamp_seconds")
        self.assertEqual(rules[0]["for"], "10m")
        self.assertEqual(rules[0]["labels"], {"severity": "warning"})
        self.assertEqual(rules[1], extra)

    def check_and_test(self, rules_doc, tests_doc):
        with tempfile.TemporaryDirectory() as tmp:
            rules = os.path.join(tmp, "rules.yaml")
            with open(rules, "w") as f:
                yaml.safe_dump(rules_doc, f)
            tests = os.path.join(tmp, "tests.yaml")
            with open(tests, "w") as f:
                yaml.safe_dump(dict(tests_doc, rule_files=[rules]), f)
            p = self.promtool_run("check", "rules", rules)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            return self.promtool_run("test", "rules", tests)

    def expectations(self, description):
        def alert(dest, kind):
            return {"exp_labels": {"severity": "warning", "destination": dest, "kind": kind},
                    "exp_annotations": {"summary": SUMMARY.format(dest=dest, kind=kind),
                                        "description": description.replace(
                                            "{{ $labels.destination }}", dest).replace(
                                            "{{ $labels.kind }}", kind)}}
        return alert

    def scenario(self, description):
        alert = self.expectations(description)
        failing = 'krc_destination_last_failure_timestamp_seconds{destination="%s",kind="%s"}'
        success = 'krc_destination_last_success_timestamp_seconds{destination="%s",kind="%s"}'
        return {"evaluation_interval": "1m", "tests": [{
            "interval": "1m",
            "input_series": [
                # oncall: succeeded once (t=100), then fails from minute 0 on, at every try
                {"series": success % ("oncall", "slack"), "values": "100x20"},
                {"series": failing % ("oncall", "slack"), "values": "200+60x20"},
                # pager: fails from minute 0 to 4, succeeds at minute 5 and from then on
                {"series": success % ("pager", "pagerduty"), "values": "100x4 500+60x15"},
                {"series": failing % ("pager", "pagerduty"), "values": "200+60x4 440x15"},
                # never failed: 0 = never
                {"series": success % ("quiet", "webhook"), "values": "100+60x20"},
                {"series": failing % ("quiet", "webhook"), "values": "0x20"},
            ],
            "alert_rule_test": [
                # pending for 10 minutes: nothing fires before
                {"eval_time": "9m", "alertname": "KrcDestinationFailing", "exp_alerts": []},
                {"eval_time": "10m", "alertname": "KrcDestinationFailing",
                 "exp_alerts": [alert("oncall", "slack")]},
                {"eval_time": "15m", "alertname": "KrcDestinationFailing",
                 "exp_alerts": [alert("oncall", "slack")]},
            ],
        }]}

    def test_promtool_fires_after_ten_minutes_and_not_after_a_success(self):
        rule = rule_groups({"prometheusRule": {"enabled": True}})
        description = rule["spec"]["groups"][0]["rules"][0]["annotations"]["description"]
        self.assertIn("{{ $labels.destination }}", description)
        self.assertIn("{{ $labels.kind }}", description)
        p = self.check_and_test(rule["spec"], self.scenario(description))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("SUCCESS", p.stdout)

    def test_promtool_sees_a_wrong_rule(self):
        """The test above can fail: a rule without `for` fires at minute 9 already, and one
        comparing the other way round fires for the destinations that succeed."""
        rule = rule_groups({"prometheusRule": {"enabled": True}})
        description = rule["spec"]["groups"][0]["rules"][0]["annotations"]["description"]
        for what, change in (("no for", lambda r: r.pop("for")),
                             ("5m", lambda r: r.update({"for": "5m"})),
                             ("<", lambda r: r.update({"expr": r["expr"].replace(">", "<")}))):
            with self.subTest(what):
                spec = yaml.safe_load(yaml.safe_dump(rule["spec"]))
                change(spec["groups"][0]["rules"][0])
                p = self.check_and_test(spec, self.scenario(description))
                self.assertNotEqual(p.returncode, 0, what + ": " + p.stdout)
                self.assertIn("FAILED", p.stdout + p.stderr)


if __name__ == "__main__":
    h.main()
