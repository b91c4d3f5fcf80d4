/* The test message of `krc notify test` in each kind's format (the kinds'
 * format_test operation, alert/sink.h): a headline that says it is a test
 * and that no restart happened, and the cluster. Nothing in it comes from
 * the cluster. */
#ifndef KRC_ALERT_DEST_TEST_MESSAGE_H
#define KRC_ALERT_DEST_TEST_MESSAGE_H

#include "krc/alert/format.h"
#include "krc/util/error.h"

#define KRC_TEST_HEADLINE "krc test message \xe2\x80\x94 no restart happened"

/* Each: *ret_body (krc_free) for step 0; step 1 is a follow-up sent after
 * step 0 was accepted (PagerDuty: the resolve of the test incident), NULL
 * when the kind has none. test_id: unique to this test (PagerDuty's
 * dedup_key). 0 or KRC_ENOMEM. */
int krc_test_format_slack(const struct krc_alert_options *fo, const char *test_id, int step,
                          char **ret_body, struct krc_error *err);
int krc_test_format_teams(const struct krc_alert_options *fo, const char *test_id, int step,
                          char **ret_body, struct krc_error *err);
int krc_test_format_gchat(const struct krc_alert_options *fo, const char *test_id, int step,
                          char **ret_body, struct krc_error *err);
int krc_test_format_pagerduty(const struct krc_alert_options *fo, const char *test_id, int step,
                              char **ret_body, struct krc_error *err);
int krc_test_format_webhook(const struct krc_alert_options *fo, const char *test_id, int step,
                            char **ret_body, struct krc_error *err);

#endif
