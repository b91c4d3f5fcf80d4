/* What the chat cards (Teams, Google Chat) show, taken once from a report
 * and its diagnosis: the same content as the Slack message, every foreign
 * text redacted and made display-safe (valid UTF-8, no control characters
 * or terminal escapes), each cut on a code-point boundary. The renderers
 * escape for their own markup. Also the JSON printing every format other
 * than Slack's shares. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "krc/alert/sink_formats.h"
#include "krc/model/report_json.h"
#include "krc/util/buf.h"
#include "krc/util/clock.h"
#include "krc/util/mem.h"
#include "krc/util/redact.h"
#include "krc/util/text.h"

char *krc_format_json_print(const struct cJSON *o)
{
    char *s = o != NULL ? cJSON_PrintUnformatted(o) : NULL;
    char *r = s != NULL ? krc_strdup(s) : NULL;

    cJSON_free(s);
    return r;
}

int krc_format_json_finish(struct cJSON *o, char **ret_body, struct krc_error *err)
{
    *ret_body = krc_format_json_print(o);
    cJSON_Delete(o);
    return *ret_body != NULL ? 0 : krc_error_set(err, KRC_ENOMEM, "out of memory");
}

char *krc_card_text(const struct krc_alert_options *fo, const char *s, size_t len, size_t max,
                    int keep_newlines)
{
    struct krc_buf red;
    struct krc_buf out;
    char *r;

    if (s == NULL) {
        return NULL;
    }
    krc_buf_init(&red, len * 2 + 1024);
    krc_buf_init(&out, len * 3 + 1024);
    if (krc_redact_apply(fo->redactor, s, len, &red, NULL) < 0 ||
        krc_report_json_sanitize(&out, red.data != NULL ? red.data : "", red.len, keep_newlines) <
            0) {
        krc_buf_cleanup(&red);
        krc_buf_cleanup(&out);
        return NULL;
    }
    krc_buf_cleanup(&red);
    r = krc_malloc(out.len + 4 > max + 4 ? out.len + 4 : max + 4);
    if (r != NULL) {
        memcpy(r, out.data != NULL ? out.data : "", out.len);
        r[out.len] = '\0';
        if (out.len > max) {
            krc_text_truncate(r, out.len, max + 1, "\xe2\x80\xa6");
        }
    }
    krc_buf_cleanup(&out);
    return r;
}

/* The end of the log: at most max bytes, starting at a line when one
 * starts in the window, on a code-point boundary. */
static char *log_tail(const struct krc_report *rep, const struct krc_alert_options *fo, size_t max)
{
    struct krc_buf red;
    struct krc_buf out;
    const char *data;
    size_t len;
    size_t start = 0;
    char *r;

    if (rep->log == NULL || rep->log_len == 0 || max == 0) {
        return NULL;
    }
    data = (const char *)rep->log;
    len = rep->log_len;
    if (len > 4 * max + 4096) {
        data += len - (4 * max + 4096); /* enough to redact and clean the end */
        len = 4 * max + 4096;
    }
    krc_buf_init(&red, len * 2 + 1024);
    krc_buf_init(&out, len * 3 + 1024);
    if (krc_redact_apply(fo->redactor, data, len, &red, NULL) < 0 ||
        krc_report_json_sanitize(&out, red.data != NULL ? red.data : "", red.len, 1) < 0) {
        krc_buf_cleanup(&red);
        krc_buf_cleanup(&out);
        return NULL;
    }
    krc_buf_cleanup(&red);
    if (out.len > max) {
        const char *nl;
        start = out.len - max;
        while (start < out.len && ((unsigned char)out.data[start] & 0xc0) == 0x80) {
            start++;
        }
        nl = memchr(out.data + start, '\n', out.len - start);
        if (nl != NULL && (size_t)(nl - out.data) + 1 < out.len) {
            start = (size_t)(nl - out.data) + 1;
        }
    }
    while (out.len > start && out.data[out.len - 1] == '\n') {
        out.len--;
    }
    r = krc_strndup(out.data != NULL ? out.data + start : "", out.len - start);
    krc_buf_cleanup(&out);
    return r;
}

static void fact(struct krc_card *c, const char *label, const struct krc_alert_options *fo,
                 const char *value)
{
    if (value != NULL && value[0] != '\0' && c->n_facts < KRC_CARD_MAX_FACTS) {
        c->facts[c->n_facts].label = label;
        c->facts[c->n_facts].value = krc_card_text(fo, value, strlen(value), 300, 0);
        if (c->facts[c->n_facts].value != NULL) {
            c->n_facts++;
        }
    }
}

int krc_card_build(const struct krc_report *rep, const struct krc_diagnosis *d,
                   const struct krc_alert_options *fo, size_t log_max, size_t text_max,
                   struct krc_card *c)
{
    char buf[1024];
    char state[128];
    char detail[512];
    char say[96];
    char line[2048];
    const char *node;
    int node_bad;
    int lead_only;
    int named;
    struct krc_buf cmds;

    memset(c, 0, sizeof(*c));
    /* the design of every chat message (krc/alert/format.h): a failing node
     * first, the cause once (its title), the container when the summary does
     * not name it */
    node_bad = krc_alert_node_state(rep, state, sizeof(state), detail, sizeof(detail));
    node = rep->node.name != NULL ? rep->node.name : rep->node_name;
    node_bad = node_bad && node != NULL;
    named = d->container != NULL && !krc_alert_summary_names(d, d->container);
    lead_only = node_bad && d->cause == KRC_CAUSE_NODE_NOT_READY; /* its title says it */
    snprintf(buf, sizeof(buf), "%s%s%s%s%s%s: %s/%s%s%s%s", node_bad ? "Node " : "",
             node_bad ? node : "", node_bad ? " " : "", node_bad ? state : "",
             node_bad && !lead_only ? " \xc2\xb7 " : "",
             lead_only ? "" : krc_alert_cause_title(d->cause),
             rep->namespace ? rep->namespace : "?", rep->name ? rep->name : "?", named ? " (" : "",
             named ? d->container : "", named ? ")" : "");
    c->title = krc_card_text(fo, buf, strlen(buf), 200, 0);
    snprintf(buf, sizeof(buf), "%s%sconfidence: %s", node_bad ? detail : "",
             node_bad ? " \xc2\xb7 " : "", krc_confidence_name(d->confidence));
    c->cause = krc_card_text(fo, buf, strlen(buf), 600, 0);
    c->summary = krc_card_text(fo, d->summary ? d->summary : "",
                               d->summary ? strlen(d->summary) : 0, text_max, 0);
    c->next_step =
        d->next_step ? krc_card_text(fo, d->next_step, strlen(d->next_step), text_max, 0) : NULL;
    for (size_t i = 0; i < d->n_evidence && c->n_evidence < KRC_CARD_MAX_EVIDENCE; i++) {
        if (!krc_alert_evidence_shown(rep, d, i)) {
            continue;
        }
        const char *e = krc_alert_evidence_text(rep, d->evidence[i], line, sizeof(line));
        c->evidence[c->n_evidence] = krc_card_text(fo, e, strlen(e), text_max / 2, 0);
        if (c->evidence[c->n_evidence] != NULL) {
            c->n_evidence++;
        }
    }
    krc_buf_init(&cmds, text_max * 2 + 64);
    for (size_t i = 0; i < d->n_commands && i < 4; i++) {
        krc_buf_printf(&cmds, "%s%s", i ? "\n" : "", d->commands[i]);
    }
    c->commands =
        cmds.len > 0 ? krc_card_text(fo, krc_buf_str(&cmds), cmds.len, text_max, 1) : NULL;
    krc_buf_cleanup(&cmds);
    /* facts the title and the summary do not already say */
    fact(c, "Cluster", fo, fo->cluster);
    fact(c, "Node", fo, node_bad ? NULL : rep->node_name);
    if (rep->what_changed != NULL && rep->what_changed[0] != '\0' &&
        c->n_facts < KRC_CARD_MAX_FACTS) {
        /* the incident's first alert: what changed before it (the whole line) */
        c->facts[c->n_facts].label = "What changed";
        c->facts[c->n_facts].value =
            krc_card_text(fo, rep->what_changed, strlen(rep->what_changed), text_max, 0);
        if (c->facts[c->n_facts].value != NULL) {
            c->n_facts++;
        }
    }
    if (d->has_termination) {
        snprintf(say, sizeof(say), "exit %d", d->exit_code);
        snprintf(buf, sizeof(buf), "exited %d", d->exit_code);
        if (!krc_alert_summary_says(d, say) && !krc_alert_summary_says(d, buf) &&
            !(snprintf(say, sizeof(say), "code %d", d->exit_code) > 0 &&
              krc_alert_summary_says(d, say))) {
            snprintf(buf, sizeof(buf), "%d%s%s%s", d->exit_code, d->signal_name ? " (" : "",
                     d->signal_name ? d->signal_name : "", d->signal_name ? ")" : "");
            fact(c, "Exit code", fo, buf);
        }
    }
    snprintf(say, sizeof(say), "reason %.60s", d->reason ? d->reason : "");
    if (d->reason != NULL && !krc_alert_summary_says(d, say) &&
        strcmp(d->reason, krc_alert_cause_title(d->cause)) != 0) {
        fact(c, "Reason", fo, d->reason);
    }
    snprintf(say, sizeof(say), "%d restart", d->restart_count);
    snprintf(buf, sizeof(buf), "%d", d->restart_count);
    if (d->restart_count_known && !krc_alert_summary_says(d, say)) {
        snprintf(say, sizeof(say), "%d restarts", d->restart_count);
        fact(c, "Restarts", fo, krc_alert_summary_says(d, say) ? NULL : buf);
    }
    fact(c, "GPU time", fo, krc_alert_accel_text(fo, buf, sizeof(buf)));
    c->log = log_tail(rep, fo, log_max);
    if (c->title == NULL || c->cause == NULL || c->summary == NULL) {
        krc_card_cleanup(c);
        return KRC_ENOMEM;
    }
    return 0;
}

void krc_card_cleanup(struct krc_card *c)
{
    krc_free(c->title);
    krc_free(c->cause);
    krc_free(c->summary);
    krc_free(c->next_step);
    krc_free(c->commands);
    krc_free(c->log);
    for (size_t i = 0; i < c->n_evidence; i++) {
        krc_free(c->evidence[i]);
    }
    for (size_t i = 0; i < c->n_facts; i++) {
        krc_free(c->facts[i].value);
    }
    memset(c, 0, sizeof(*c));
}

int krc_card_fit(const struct krc_report *rep, const struct krc_diagnosis *d,
                 const struct krc_alert_options *fo, const struct krc_card_fit *fit,
                 char **ret_body, struct krc_error *err)
{
    *ret_body = NULL;
    for (size_t k = 0; k < fit->n_steps; k++) {
        struct krc_card c;
        char *s;

        if (krc_card_build(rep, d, fo, fit->log_max[k], fit->text_max[k], &c) < 0) {
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        s = fit->render(&c, fit->ud);
        krc_card_cleanup(&c);
        if (s == NULL) {
            return krc_error_set(err, KRC_ENOMEM, "out of memory");
        }
        if (strlen(s) <= fit->max_payload) {
            *ret_body = s;
            return 0;
        }
        krc_free(s);
    }
    return krc_error_set(err, KRC_ETOOBIG, "%s card larger than %zu bytes", fit->service,
                         fit->max_payload);
}
