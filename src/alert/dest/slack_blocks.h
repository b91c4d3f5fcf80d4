/* Inside the Slack destination's format (slack_format.c: escaping, budgets
 * and the blocks of the diagnosis; slack_message.c: the report's sections,
 * the log tail and the messages): what the two files share. Not for other
 * modules: alert/dest/slack.h is the Slack format's interface. */
#ifndef KRC_DEST_SLACK_BLOCKS_H
#define KRC_DEST_SLACK_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "krc/alert/dest/slack.h"
#include "krc/util/buf.h"

#define ELLIPSIS "\xe2\x80\xa6"
#define ZWSP "\xe2\x80\x8b"
#define BULLET "\xe2\x80\xa2"
#define DOT " \xc2\xb7 "
#define FENCE "```"

/* byte capacity of a buffer holding `units` UTF-16 units of text (a unit
 * is at most 3 bytes: BMP code points; astral ones are 4 bytes for 2) */
#define BYTES_FOR(units) ((units)*3u + 64u)

#define CODE_BUDGET (KRC_SLACK_SECTION_MAX - 8) /* "```\n" + "\n```" */
#define EVIDENCE_LINE_MAX 600
#define EVENT_MSG_MAX 400
#define NOTE_MAX 400
#define NAME_MAX_UNITS 300
#define MORE_RESERVE 60 /* room kept for an "… and K more" line */
#define NEXT_STEP_MAX 600
#define COMMAND_MAX 400 /* one kubectl command */
#define AGE_SHOWN 120   /* seconds: a time closer to now than this is not said ("0s ago") */
/* The log tail of a chat message: at most LOG_LINES_SHOWN lines and LOG_UNITS_SHOWN
 * characters of them (the history keeps all): the alert fits one screen
 * (tests/integration/test_alert_layout.py measures it). */
#define LOG_LINES_SHOWN 15
#define LOG_UNITS_SHOWN 1400

/* escape flags */
enum {
    ESC_MRKDWN = 1u << 0,   /* & < > entities, backtick runs broken */
    ESC_NEWLINES = 1u << 1, /* keep \n and \t (else spaces) */
};

/* One message being built: the first error is sticky (later steps do
 * nothing). */
struct fmt {
    const struct krc_alert_options *o;
    int rc; /* first error, sticky: later steps do nothing */
    int redactions;
    struct krc_buf red; /* scratch for redacted copies */
};

/* The blocks of a message and what it may still use. */
struct blocks {
    cJSON *arr;
    size_t n;
    size_t max; /* blocks this message may still use before the context */
};

size_t krc_slack_buf_units(const struct krc_buf *b);
void krc_slack_fmt_init(struct fmt *f, const struct krc_alert_options *o);
void krc_slack_fail(struct fmt *f, int rc);
void krc_slack_lit(struct fmt *f, struct krc_buf *b, const char *s);
void krc_slack_litf(struct fmt *f, struct krc_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int krc_slack_put_n(struct fmt *f, struct krc_buf *b, const void *s, size_t len, unsigned flags,
                    size_t max_units);
int krc_slack_put(struct fmt *f, struct krc_buf *b, const char *s, size_t max_units);
const unsigned char *krc_slack_redact(struct fmt *f, const void *data, size_t len, size_t *ret_len);
void krc_slack_put_red(struct fmt *f, struct krc_buf *b, const char *s, size_t max_units);
int krc_slack_add_line(struct fmt *f, struct krc_buf *sec, const struct krc_buf *line,
                       size_t budget, size_t reserve);
void krc_slack_age_of(const struct fmt *f, int64_t t, char *out, size_t outsz);
cJSON *krc_slack_new_obj(struct fmt *f);
void krc_slack_set_str(struct fmt *f, cJSON *o, const char *k, const char *v);
void krc_slack_push(struct fmt *f, cJSON *arr, cJSON *item);
void krc_slack_attach(struct fmt *f, cJSON *o, const char *k, cJSON *item);
void krc_slack_fit(struct fmt *f, struct krc_buf *b, size_t max_units);
/* block_id: NULL, or "cause:CODE" on a restart's header (the cause code for
 * machines: the chat text says the cause once, by its title) */
void krc_slack_block_header(struct fmt *f, struct blocks *bl, const char *plain,
                            const char *block_id);
void krc_slack_block_section(struct fmt *f, struct blocks *bl, struct krc_buf *mrkdwn);
void krc_slack_block_fields(struct fmt *f, struct blocks *bl, struct krc_buf *fields, size_t n);
void krc_slack_block_context(struct fmt *f, cJSON *arr, struct krc_buf *mrkdwn);
void krc_slack_envelope(struct fmt *f, cJSON *root);
int krc_slack_finish(struct fmt *f, cJSON *root, char **ret_json, struct krc_error *err);
/* The node when it fails (krc_alert_node_state): it leads the message. */
struct krc_slack_node {
    int leads;
    const char *name;
    char state[128];
    char detail[512];
};

void krc_slack_node_lead(const struct krc_report *r, struct krc_slack_node *nl);
void krc_slack_headline(struct fmt *f, struct krc_buf *b, const struct krc_report *r,
                        const struct krc_diagnosis *d);
void krc_slack_header_text(struct fmt *f, struct krc_buf *b, const struct krc_report *r,
                           const struct krc_diagnosis *d);
void krc_slack_cause_section(struct fmt *f, struct blocks *bl, const struct krc_report *r,
                             const struct krc_diagnosis *d);
void krc_slack_evidence_section(struct fmt *f, struct blocks *bl, const struct krc_report *r,
                                const struct krc_diagnosis *d);
size_t krc_slack_commands_block(struct fmt *f, struct krc_buf *b, const struct krc_diagnosis *d,
                                size_t max_commands, size_t line_max, size_t budget);
void krc_slack_next_step_section(struct fmt *f, struct blocks *bl, const struct krc_diagnosis *d);
void krc_slack_facts_section(struct fmt *f, struct blocks *bl, const struct krc_report *r,
                             const struct krc_diagnosis *d);

#endif
