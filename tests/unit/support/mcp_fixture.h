/* The MCP tools server (krc_mcp_tools_new) over a history database, called
 * as a client calls it: tools/call requests through krc_mcp_handle, each
 * answer parsed. For tests/unit/mcp/test_mcp_tools.c and test_mcp_incidents.c. */
#ifndef KRC_TEST_MCP_FIXTURE_H
#define KRC_TEST_MCP_FIXTURE_H

#include <cjson/cJSON.h>

#include "krc/mcp/mcp.h"
#include "krc/mcp/mcp_tools.h"
#include "krc/util/buf.h"

struct krc_test_mcp {
    struct krc_mcp_tools *tools;
    struct krc_mcp *m;
    struct krc_buf out; /* the last answer as sent */
    cJSON *doc;         /* and parsed */
};

/* The tools on the database `db` with the scope sc (NULL: none) and the scan
 * settings chunk and budget (0: the defaults). A failure fails the test,
 * naming it. Free with krc_test_mcp_close. */
void krc_test_mcp_open(struct krc_test_mcp *f, const char *db,
                       const struct krc_mcp_scope_config *sc, long chunk, long budget);
void krc_test_mcp_close(struct krc_test_mcp *f);

/* tools/call NAME with ARGS (JSON text): its result (owned by f, valid until
 * the next call). An answer that is no JSON-RPC result fails the test. */
const cJSON *krc_test_mcp_call(struct krc_test_mcp *f, const char *name, const char *args);

/* Whether a result is a tool error; the text of its first content item; its
 * structuredContent (a tool error fails the test, with its text). */
int krc_test_mcp_is_error(const cJSON *res);
const char *krc_test_mcp_text(const cJSON *res);
const cJSON *krc_test_mcp_sc(const cJSON *res);

/* NAME with ARGS answers a tool error whose text has both needles (the
 * second may be NULL); anything else fails the test. */
void krc_test_mcp_refused(struct krc_test_mcp *f, const char *name, const char *args,
                          const char *needle, const char *needle2);

#endif
