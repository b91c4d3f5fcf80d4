/* What every format shares: a cause's severity and title, the options'
 * defaults, and what a restart message shows (krc/alert/format.h). */
#include "krc/alert/format.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "krc/detect/accel_time.h"
#include "krc/diagnose/diagnose.h"
#include "krc/util/clock.h"
#include "krc/model/diagnosis.h"
#include "krc/model/report.h"

enum krc_alert_severity krc_alert_cause_severity(enum krc_cause cause)
{
    switch (cause) {
    case KRC_CAUSE_OOM_KILLED:
    case KRC_CAUSE_SEGFAULT:
    case KRC_CAUSE_GPU_OUT_OF_MEMORY:
    case KRC_CAUSE_GPU_ERROR:
    case KRC_CAUSE_GPU_DEVICE_UNHEALTHY:
    case KRC_CAUSE_COMMAND_NOT_FOUND:
    case KRC_CAUSE_PERMISSION_DENIED:
    case KRC_CAUSE_APP_ERROR:
        return KRC_ALERT_SEV_CRITICAL;
    case KRC_CAUSE_LIVENESS_PROBE_FAILED:
    case KRC_CAUSE_STARTUP_PROBE_FAILED:
    case KRC_CAUSE_DEPENDENCY_UNREACHABLE:
    case KRC_CAUSE_KILLED:
    case KRC_CAUSE_NODE_NOT_READY:
    case KRC_CAUSE_SANDBOX_CHANGED:
        return KRC_ALERT_SEV_WARNING;
    default:
        return KRC_ALERT_SEV_INFO;
    }
}

const char *krc_alert_cause_title(enum krc_cause cause)
{
    static const char *const titles[KRC_CAUSE_COUNT] = {
        "Restarted",
        "OOMKilled",
        "Liveness probe failed",
        "Startup probe failed",
        "Command not found",
        "Permission denied",
        "Segmentation fault",
        "GPU out of memory",
        "GPU error",
        "Dependency unreachable",
        "Application error",
        "Completed",
        "Killed",
        "Terminated",
        "Container failed to start",
        "Exec format error",
        "Illegal instruction",
        "Aborted",
        "Application out of memory",
        "Disk full",
        "Evicted",
        "Node not ready",
        "Restarted by its rule",
        "GPU device unhealthy",
        "Restarted with the other containers",
        "Restarted to resize",
        "Pod sandbox re-created",
    };

    if ((int)cause < 0 || (int)cause >= KRC_CAUSE_COUNT) {
        return titles[0];
    }
    return titles[cause];
}

void krc_alert_options_init(struct krc_alert_options *o)
{
    memset(o, 0, sizeof(*o));
    o->max_log_lines = KRC_ALERT_DEFAULT_LOG_LINES;
}

/* ---- what a restart message shows ------------------------------------------ */

static int starts(const char *s, const char *prefix)
{
    return s != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
}

static int has_ci(const char *s, const char *needle)
{
    size_t n = strlen(needle);

    for (; s != NULL && *s; s++) {
        if (strncasecmp(s, needle, n) == 0) {
            return 1;
        }
    }
    return 0;
}

static int is_pressure(const char *type)
{
    return strcmp(type, "MemoryPressure") == 0 || strcmp(type, "DiskPressure") == 0 ||
           strcmp(type, "PIDPressure") == 0 || strcmp(type, "NetworkUnavailable") == 0;
}

static void condition_detail(const struct krc_report_node_condition *c, char *out, size_t size)
{
    const char *msg = c->message != NULL ? c->message : "";
    const char *reason = c->reason != NULL ? c->reason : "";

    if (msg[0] != '\0' && reason[0] != '\0') {
        snprintf(out, size, "%s (%s)", msg, reason);
    } else {
        snprintf(out, size, "%s%s", msg, reason);
    }
}

int krc_alert_node_state(const struct krc_report *r, char *ret_state, size_t state_size,
                         char *ret_detail, size_t detail_size)
{
    const struct krc_report_node *nd = &r->node;
    const struct krc_report_node_condition *first = NULL;
    size_t used = 0;

    ret_state[0] = '\0';
    ret_detail[0] = '\0';
    if (!nd->present) {
        return 0;
    }
    for (size_t i = 0; i < nd->n_conditions; i++) {
        const struct krc_report_node_condition *c = &nd->conditions[i];
        if (c->type != NULL && c->status != NULL && strcmp(c->type, "Ready") == 0 &&
            strcmp(c->status, "True") != 0) {
            char words[480];
            snprintf(ret_state, state_size, "NotReady");
            condition_detail(c, words, sizeof(words));
            snprintf(ret_detail, detail_size, "Ready=%s%s%s", c->status, words[0] ? ": " : "",
                     words);
            return 1;
        }
    }
    for (size_t i = 0; i < nd->n_conditions; i++) {
        const struct krc_report_node_condition *c = &nd->conditions[i];
        int n;
        if (c->type == NULL || c->status == NULL || !is_pressure(c->type) ||
            strcmp(c->status, "True") != 0 || used >= state_size) {
            continue;
        }
        n = snprintf(ret_state + used, state_size - used, "%s%s", used ? ", " : "", c->type);
        used = n < 0 ? state_size : used + (size_t)n;
        first = first != NULL ? first : c;
    }
    if (first != NULL) {
        condition_detail(first, ret_detail, detail_size);
        return 1;
    }
    return 0;
}

/* The text an evidence line quotes, after its one-word label ("log: ",
 * "runtime: "), else the line. */
static const char *quoted_part(const char *e)
{
    const char *colon = strstr(e, ": ");

    if (colon == NULL || colon == e || colon - e > 20) {
        return e;
    }
    for (const char *p = e; p < colon; p++) {
        if (!islower((unsigned char)*p) && *p != ' ') {
            return e;
        }
    }
    return colon + 2;
}

/* Does the summary hold the text of this evidence line (a window of it)? */
static int summary_quotes(const char *summary, const char *e)
{
    enum { WINDOW = 24, STEP = 4 };
    const char *body = quoted_part(e);
    size_t n = strlen(body);
    char probe[WINDOW + 1];

    if (summary == NULL || n < 8) {
        return 0;
    }
    if (n <= WINDOW) {
        return strstr(summary, body) != NULL;
    }
    for (size_t i = 0; i + WINDOW <= n; i += STEP) {
        memcpy(probe, body + i, WINDOW);
        probe[WINDOW] = '\0';
        if (strstr(summary, probe) != NULL) {
            return 1;
        }
    }
    return 0;
}

static int is_node_condition_line(const struct krc_report *r, const char *e)
{
    const struct krc_report_node *nd = &r->node;
    const char *name = nd->name != NULL ? nd->name : r->node_name;
    size_t n;

    if (name == NULL || !starts(e, "node ") || strncmp(e + 5, name, strlen(name)) != 0) {
        return 0;
    }
    e += 5 + strlen(name);
    if (starts(e, ": condition ") || starts(e, ": conditions ") || starts(e, " is cordoned")) {
        return 1;
    }
    for (size_t i = 0; i < nd->n_conditions; i++) {
        const char *t = nd->conditions[i].type;
        if (t != NULL && starts(e, ": ") && strncmp(e + 2, t, n = strlen(t)) == 0 &&
            e[2 + n] == ':') {
            return 1;
        }
    }
    return 0;
}

static int is_backoff_line(const char *e)
{
    return starts(e, "state: waiting CrashLoopBackOff") ||
           (starts(e, "event BackOff ") && has_ci(e, "restarting failed container"));
}

int krc_alert_evidence_shown(const struct krc_report *r, const struct krc_diagnosis *d, size_t i)
{
    char state[128];
    char detail[8];
    const char *e;

    if (i >= d->n_evidence || d->evidence[i] == NULL) {
        return 0;
    }
    e = d->evidence[i];
    if (is_backoff_line(e)) {
        return 0;
    }
    if (d->has_termination &&
        (starts(e, "lastState.terminated: ") || starts(e, "state.terminated: "))) {
        return 0;
    }
    if ((is_node_condition_line(r, e) || starts(e, "event NodeNotReady ")) &&
        krc_alert_node_state(r, state, sizeof(state), detail, sizeof(detail)) &&
        (!starts(e, "event ") || strcmp(state, "NotReady") == 0)) {
        return 0;
    }
    return starts(e, "event ") || !summary_quotes(d->summary, e);
}

const char *krc_alert_evidence_text(const struct krc_report *r, const char *e, char *buf,
                                    size_t size)
{
    const char *name = r->node.name != NULL ? r->node.name : r->node_name;
    size_t n = name != NULL ? strlen(name) : 0;

    if (n == 0 || !starts(e, "node ") || strncmp(e + 5, name, n) != 0 || e[5 + n] != ':') {
        return e;
    }
    snprintf(buf, size, "node%s", e + 5 + n);
    return buf;
}

int krc_alert_event_shown(const struct krc_report *r, const struct krc_diagnosis *d,
                          const struct krc_report_event *e, int node_leads)
{
    static const char combined[] = "(combined from similar events): ";
    const char *msg = e->message != NULL ? e->message : "";
    char probe[64];

    if (e->type == NULL || strcmp(e->type, "Warning") != 0) {
        return 0; /* a Normal event that is evidence is in the evidence */
    }
    if (e->reason != NULL && strcmp(e->reason, "BackOff") == 0 &&
        has_ci(msg, "restarting failed container")) {
        return 0;
    }
    if (node_leads && e->reason != NULL && strcmp(e->reason, "NodeNotReady") == 0) {
        return 0;
    }
    if (starts(msg, combined)) {
        msg += sizeof(combined) - 1;
    }
    snprintf(probe, sizeof(probe), "%s", msg);
    for (size_t i = 0; i < d->n_evidence && probe[0] != '\0'; i++) {
        if (starts(d->evidence[i], "event ") && strstr(d->evidence[i], probe) != NULL &&
            krc_alert_evidence_shown(r, d, i)) {
            return 0;
        }
    }
    return 1;
}

int krc_alert_note_shown(const char *note)
{
    return note != NULL && !starts(note, "no previous log");
}

int krc_alert_summary_says(const struct krc_diagnosis *d, const char *needle)
{
    size_t n = strlen(needle);

    for (const char *p = d->summary; p != NULL && (p = strstr(p, needle)) != NULL; p++) {
        if (!isalnum((unsigned char)p[n])) {
            return 1;
        }
    }
    return 0;
}

const char *krc_alert_accel_text(const struct krc_alert_options *fo, char *buf, size_t size)
{
    const struct krc_accel_note *a = fo->accel;
    long long s;
    char when[32];

    if (a == NULL || a->devices <= 0 || size == 0) {
        return NULL;
    }
    s = (long long)(a->lost_ms / 1000);
    if (s < 120) {
        snprintf(when, sizeof(when), "%lld s", s);
    } else if (s < 2 * 3600) {
        snprintf(when, sizeof(when), "%lld min", s / 60);
    } else {
        snprintf(when, sizeof(when), "%.1f h", (double)s / 3600.0);
    }
    snprintf(buf, size, "holds %ld %s; %s in back-off so far", a->devices, a->resource, when);
    return buf;
}

static int name_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

int krc_alert_summary_names(const struct krc_diagnosis *d, const char *name)
{
    size_t n = name != NULL ? strlen(name) : 0;

    for (const char *p = d->summary; n > 0 && p != NULL && (p = strstr(p, name)) != NULL; p++) {
        int ends = !name_char(p[n]) || (p[n] == '.' && !isalnum((unsigned char)p[n + 1]));
        if ((p == d->summary || !name_char(p[-1])) && ends) {
            return 1;
        }
    }
    return 0;
}

/* ---- the end of an incident ---------------------------------------------- */

/* "03:56" of a unix time (UTC). */
static void hhmm(int64_t t, char *out, size_t size)
{
    char ts[40];

    krc_clock_format_rfc3339(t, ts, sizeof(ts));
    snprintf(out, size, "%.5s", strlen(ts) >= 16 ? ts + 11 : ts);
}

void krc_alert_resolved_line(const struct krc_alert_recovered *rec, char *out, size_t size)
{
    char ready[32];
    char from[16];
    char to[16];
    char id[32] = "";

    krc_diagnose_format_duration(rec->ready_seconds, ready, sizeof(ready));
    if (rec->incident_id > 0) {
        snprintf(id, sizeof(id), " #%lld", (long long)rec->incident_id);
    }
    hhmm(rec->first_at, from, sizeof(from));
    hhmm(rec->last_at, to, sizeof(to));
    if (rec->moved_on) {
        snprintf(out, size,
                 "Resolved: incident%s of %s %s/%s container %s (%s), %ld restart%s from %s "
                 "to %s UTC; its last pod%s%s went away and no restart followed.",
                 id, rec->workload_kind ? rec->workload_kind : "",
                 rec->namespace ? rec->namespace : "", rec->workload_name ? rec->workload_name : "",
                 rec->container ? rec->container : "", rec->cause ? rec->cause : "unknown",
                 rec->restarts, rec->restarts == 1 ? "" : "s", from, to,
                 rec->last_pod != NULL && rec->last_pod[0] ? " " : "",
                 rec->last_pod != NULL ? rec->last_pod : "");
        return;
    }
    snprintf(out, size,
             "Resolved: incident%s of %s %s/%s container %s (%s), %ld restart%s from %s to "
             "%s UTC; the container has run ready for %s%s%s.",
             id, rec->workload_kind ? rec->workload_kind : "", rec->namespace ? rec->namespace : "",
             rec->workload_name ? rec->workload_name : "", rec->container ? rec->container : "",
             rec->cause ? rec->cause : "unknown", rec->restarts, rec->restarts == 1 ? "" : "s",
             from, to, ready, rec->last_pod != NULL && rec->last_pod[0] ? " in pod " : "",
             rec->last_pod != NULL ? rec->last_pod : "");
}
