/* See include/krc/util/gnutls_noinit.h. Not part of krc_core: only the krc
 * executable (and its unit test) link it, since interposing a library's
 * symbols is a decision for a whole program. */
#define _GNU_SOURCE
#include "krc/util/gnutls_noinit.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

/* Prototypes of the interposed GnuTLS functions (no GnuTLS headers needed:
 * the signatures are part of GnuTLS's stable ABI, version GNUTLS_3_4). */
int _gnutls_global_init_skip(void);
int gnutls_global_init(void);
void gnutls_global_deinit(void);

#define GNUTLS_E_INTERNAL_ERROR (-59)

/* Set by this executable's constructor, which runs after those of every
 * library it depends on: calls before it are load-time calls. */
static atomic_int program_loaded;
static atomic_int inits_skipped;  /* gnutls_global_init() calls skipped */
static atomic_int deinits_owed;   /* matching deinits still to swallow */
static atomic_int implicit_asked; /* GnuTLS asked _gnutls_global_init_skip */

__attribute__((constructor)) static void mark_loaded(void)
{
    atomic_store(&program_loaded, 1);
}

/* GnuTLS's hook: nonzero skips its implicit initialisation (and the matching
 * deinitialisation in its destructor). */
int _gnutls_global_init_skip(void)
{
    atomic_store(&implicit_asked, 1);
    return 1;
}

static void *real_symbol(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

int gnutls_global_init(void)
{
    int (*real)(void);
    void *sym;

    if (!atomic_load(&program_loaded)) {
        atomic_fetch_add(&inits_skipped, 1);
        atomic_fetch_add(&deinits_owed, 1);
        return 0;
    }
    sym = real_symbol("gnutls_global_init");
    if (sym == NULL) {
        return GNUTLS_E_INTERNAL_ERROR; /* GnuTLS is not loaded: nothing to initialise */
    }
    memcpy(&real, &sym, sizeof(real));
    return real();
}

void gnutls_global_deinit(void)
{
    void (*real)(void);
    void *sym;
    int owed = atomic_load(&deinits_owed);

    /* Swallow the deinits that pair with skipped inits (libmicrohttpd's
     * destructor), so a real initialisation made later keeps its count. */
    while (owed > 0) {
        if (atomic_compare_exchange_weak(&deinits_owed, &owed, owed - 1)) {
            return;
        }
    }
    sym = real_symbol("gnutls_global_deinit");
    if (sym != NULL) {
        memcpy(&real, &sym, sizeof(real));
        real();
    }
}

int krc_gnutls_noinit_skipped(void)
{
    return atomic_load(&inits_skipped) + atomic_load(&implicit_asked);
}
