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
    struct krc_buf cmds;

    memset(c, 0, sizeof(*c));
    snprintf(buf, sizeof(buf), "%s: %s/%s (%s)", krc_alert_cause_title(d->cause),
             rep->namespace ? rep->namespace : "?", rep->name ? rep->name : "?",
             d->container ? d->container : "?");
    c->title = krc_card_text(fo, buf, strlen(buf), 200, 0);
    snprintf(buf, sizeof(buf), "%s, %s confidence", krc_cause_name(d->cause),
             krc_confidence_name(d->confidence));
    c->cause = krc_strdup(buf);
    c->summary = krc_card_text(fo, d->summary ? d->summary : "",
                               d->summary ? strlen(d->summary) : 0, text_max, 0);
    c->next_step =
        d->next_step ? krc_card_text(fo, d->next_step, strlen(d->next_step), text_max, 0) : NULL;
    for (size_t i = 0; i < d->n_evidence && c->n_evidence < KRC_CARD_MAX_EVIDENCE; i++) {
        c->evidence[c->n_evidence] =
            krc_card_text(fo, d->evidence[i], strlen(d->evidence[i]), text_max / 2, 0);
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
    fact(c, "Cluster", fo, fo->cluster);
    fact(c, "Namespace", fo, rep->namespace);
    fact(c, "Pod", fo, rep->name);
    fact(c, "Container", fo, d->container);
    fact(c, "Node", fo, rep->node_name);
    if (d->has_termination) {
        snprintf(buf, sizeof(buf), "%d%s%s%s", d->exit_code, d->signal_name ? " (" : "",
                 d->signal_name ? d->signal_name : "", d->signal_name ? ")" : "");
        fact(c, "Exit code", fo, buf);
    }
    fact(c, "Reason", fo, d->reason);
    snprintf(buf, sizeof(buf), "%d", d->restart_count);
    fact(c, "Restarts", fo, d->restart_count_known ? buf : NULL);
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
