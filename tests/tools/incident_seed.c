/* incident_seed DB [NOW]: write the history of tests/unit/support/incident_seed.h
 * (incidents and recorded changes, through the store API) into the SQLite
 * file or PostgreSQL URL DB, relative to NOW (unix seconds; default: the
 * current time), and print the ids as one JSON object, for the integration
 * tests of krc history and krc mcp (tests/integration/test_history.py,
 * test_mcp.py, test_mcp_clients.py). Exit status 0, or 1 after saying why. */
#include <stdio.h>
#include <stdlib.h>

#include "incident_seed.h"
#include "krc/util/clock.h"

int main(int argc, char **argv)
{
    struct krc_test_incidents ids;
    int64_t now = argc > 2 ? (int64_t)strtoll(argv[2], NULL, 10) : krc_clock_now();

    if (argc < 2 || argc > 3 || now <= 0) {
        fprintf(stderr, "usage: incident_seed DB [NOW]\n");
        return 1;
    }
    if (krc_test_seed_incidents(argv[1], now, &ids) != 0) {
        return 1;
    }
    printf("{\"t\":%lld,\"api\":%lld,\"canary\":%lld,\"dns\":%lld,\"trainer\":%lld,"
           "\"api_first\":%lld,\"api_2\":%lld,\"api_latest\":%lld,\"canary_first\":%lld,"
           "\"dns_first\":%lld,\"trainer_first\":%lld,\"trainer_latest\":%lld}\n",
           (long long)ids.t, (long long)ids.api, (long long)ids.canary, (long long)ids.dns,
           (long long)ids.trainer, (long long)ids.api_first, (long long)ids.api_2,
           (long long)ids.api_latest, (long long)ids.canary_first, (long long)ids.dns_first,
           (long long)ids.trainer_first, (long long)ids.trainer_latest);
    return fflush(stdout) == 0 ? 0 : 1;
}
