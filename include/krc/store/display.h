/* What a store target may show in logs and errors (issue 17): a SQLite path
 * as it is, a PostgreSQL URL with its password replaced by "****" (the
 * password of the userinfo and any password= query parameter). Pure. */
#ifndef KRC_STORE_DISPLAY_H
#define KRC_STORE_DISPLAY_H

/* An owned copy of `target` (krc_free) with its passwords masked; NULL when
 * out of memory or target is NULL. */
char *krc_store_display(const char *target);

#endif
