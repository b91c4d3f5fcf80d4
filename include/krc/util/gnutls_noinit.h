/* Keep GnuTLS, which krc loads but never uses, from initialising itself.
 *
 * krc speaks TLS with OpenSSL (libcurl4-openssl). Debian's libcurl4 still
 * loads GnuTLS through librtmp, and libmicrohttpd links it for HTTPS support
 * krc does not enable. Both initialise it while the program is loaded:
 * GnuTLS's own constructor, and libmicrohttpd's constructor calling
 * gnutls_global_init(). That work (ASN.1 tables, random generator, crypto
 * back-ends, system priorities) maps about 0.9 MiB of GnuTLS pages and heap
 * into every krc process for nothing (docs/performance.md).
 *
 * This module, linked into the krc executable only, stops exactly those
 * load-time initialisations:
 *  - it defines _gnutls_global_init_skip(), GnuTLS's documented hook for
 *    programs that do not want the implicit initialisation (the
 *    GNUTLS_SKIP_GLOBAL_INIT macro of <gnutls/gnutls.h> defines the same);
 *  - it interposes gnutls_global_init()/gnutls_global_deinit(): a call made
 *    while the libraries are being loaded (before the executable's own
 *    constructors ran) is counted and skipped, and the matching deinit at
 *    exit is swallowed; any later call is forwarded to the real GnuTLS
 *    functions, so a library that really uses GnuTLS at run time (it would
 *    take an rtmp:// or ldaps:// URL, which krc never builds) still gets a
 *    working library.
 * The executable exports these symbols (CMakeLists.txt: export-dynamic-symbol)
 * so that the dynamic linker binds the libraries' calls to them. */
#ifndef KRC_GNUTLS_NOINIT_H
#define KRC_GNUTLS_NOINIT_H

/* Load-time gnutls_global_init() calls that were skipped (libmicrohttpd's),
 * plus 1 when GnuTLS asked whether to skip its implicit initialisation.
 * 0 when GnuTLS is not loaded or the interposition did not take effect. */
int krc_gnutls_noinit_skipped(void);

#endif
