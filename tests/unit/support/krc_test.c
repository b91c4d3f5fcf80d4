/* What several unit tests share (krc_test.h). */
#include "krc_test.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

long krc_test_alloc_sweep(long (*run)(void *ud, long n), void *ud)
{
    for (long n = 0;; n++) {
        if (run(ud, n) <= n) {
            return n + 1;
        }
    }
}

struct krc_policy krc_test_policy(const char *webhook_url)
{
    struct krc_policy p;
    memset(&p, 0, sizeof(p));
    p.webhook_url = webhook_url;
    p.mute_seconds = KRC_TEST_MUTE_S;
    p.storm_window_s = KRC_TEST_STORM_WINDOW_S;
    p.storm_delay_s = KRC_TEST_STORM_DELAY_S;
    return p;
}

struct krc_sender_options krc_test_sender_options(const char *webhook_url)
{
    struct krc_sender_options o;
    memset(&o, 0, sizeof(o));
    o.webhook_url = webhook_url;
    o.mute_seconds = KRC_TEST_MUTE_S;
    o.storm_window_s = KRC_TEST_STORM_WINDOW_S;
    o.storm_delay_s = KRC_TEST_STORM_DELAY_S;
    return o;
}

void krc_test_remove_db(const char *path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-delivered"};
    char p[4096];

    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", path, suffixes[i]);
        unlink(p);
    }
}
