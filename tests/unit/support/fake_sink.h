/* The formats of a fake destination for the sender's tests: fixed bodies
 * ("a restart", "a storm") for tests that look at what is sent or settled,
 * not at the text. Each test keeps its own create, send and resolved format
 * (what it records differs). */
#ifndef KRC_TEST_FAKE_SINK_H
#define KRC_TEST_FAKE_SINK_H

#include "krc/alert/sink.h"

/* {"text":"a restart"}, no fallback. */
int krc_test_sink_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                                 const struct krc_alert_options *fo, char **ret_body,
                                 char **ret_fallback, struct krc_error *err);
/* {"text":"a storm"}. */
int krc_test_sink_format_summary(const struct krc_alert_summary *sum,
                                 const struct krc_alert_options *fo, char **ret_body,
                                 struct krc_error *err);

#endif
