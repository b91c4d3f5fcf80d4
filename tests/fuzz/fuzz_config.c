/* The configuration file (config/config.c): any bytes as a krc.yaml, loaded
 * and checked as `krc run --config` and `krc config check` do. Every error
 * names the file; a file that loads passes or fails krc_config_validate
 * with a message; nothing leaks. */
#include <string.h>

#include "fuzz.h"
#include "krc/alert/dest.h"
#include "krc/config/config.h"
#include "krc/util/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write(0, "config.yaml", data, size);
    struct krc_config cfg;
    struct krc_error err;
    char *errors = NULL;
    char *notes = NULL;
    int rc;

    if (path == NULL) {
        return 0;
    }
    (void)krc_dest_registry_init(NULL, 0); /* the kinds of destination, as main does */
    krc_config_init(&cfg);
    rc = krc_config_load_file(&cfg, path, &errors, &err);
    if (rc != 0) {
        FUZZ_CHECK(errors != NULL && strstr(errors, "config.yaml") != NULL,
                   "error without the file name: %s", errors != NULL ? errors : err.msg);
    } else {
        FUZZ_CHECK(errors == NULL, "errors on success: %s", errors);
        rc = krc_config_validate(&cfg, &err);
        FUZZ_CHECK(rc == 0 || err.msg[0] != '\0', "validate %d without a message", rc);
    }
    krc_free(errors);
    krc_config_cleanup(&cfg);

    errors = NULL;
    krc_config_init(&cfg);
    rc = krc_config_check_file(&cfg, path, &errors, &notes, &err);
    FUZZ_CHECK(rc == 0 || errors != NULL, "check_file %d without errors", rc);
    krc_free(errors);
    krc_free(notes);
    krc_config_cleanup(&cfg);
    return 0;
}
