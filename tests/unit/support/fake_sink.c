#include "fake_sink.h"

#include "krc/util/error.h"
#include "krc/util/mem.h"

int krc_test_sink_format_restart(const struct krc_report *rep, const struct krc_diagnosis *diag,
                                 const struct krc_alert_options *fo, char **ret_body,
                                 char **ret_fallback, struct krc_error *err)
{
    (void)rep;
    (void)diag;
    (void)fo;
    *ret_body = krc_strdup("{\"text\":\"a restart\"}");
    *ret_fallback = NULL;
    return *ret_body != NULL ? 0 : krc_error_set(err, KRC_ENOMEM, "out of memory");
}

int krc_test_sink_format_summary(const struct krc_alert_summary *sum,
                                 const struct krc_alert_options *fo, char **ret_body,
                                 struct krc_error *err)
{
    (void)sum;
    (void)fo;
    *ret_body = krc_strdup("{\"text\":\"a storm\"}");
    return *ret_body != NULL ? 0 : krc_error_set(err, KRC_ENOMEM, "out of memory");
}
