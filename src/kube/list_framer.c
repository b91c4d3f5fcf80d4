#include "krc/kube/list_framer.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "krc/util/jscan.h"
#include "krc/util/mem.h"

enum {
    ST_BEGIN = 0,   /* before '{' */
    ST_OBJ_FIRST,   /* after '{': key or '}' */
    ST_OBJ_NEXT,    /* after a member: ',' or '}' */
    ST_OBJ_KEY,     /* after ',': key */
    ST_KEY,         /* inside a key string */
    ST_COLON,       /* after a key */
    ST_VALUE,       /* after ':' */
    ST_TOPVAL,      /* inside a top-level value */
    ST_ITEMS_FIRST, /* after "items":[ */
    ST_ITEMS_NEXT,  /* after an item: ',' or ']' */
    ST_ITEM_START,  /* after ',' in items */
    ST_ITEM,        /* inside an item */
    ST_END,         /* after the closing '}' */
    ST_FAILED,
};

enum {
    VK_CONTAINER = 1,
    VK_STRING,
    VK_SCALAR,
};

enum {
    KEY_OTHER = 0,
    KEY_ITEMS,
    KEY_METADATA,
    KEY_KIND,
    KEY_CODE,
    KEY_REASON,
    KEY_MESSAGE,
};

int krc_list_framer_init(struct krc_list_framer *lf, size_t max_item)
{
    memset(lf, 0, sizeof(*lf));
    krc_buf_init(&lf->val, max_item);
    lf->max_item = max_item;
    return max_item == 0 ? KRC_EINVAL : 0;
}

static void free_fields(struct krc_list_framer *lf)
{
    krc_free(lf->kind);
    krc_free(lf->resource_version);
    krc_free(lf->continue_token);
    krc_free(lf->reason);
    krc_free(lf->message);
    lf->kind = NULL;
    lf->resource_version = NULL;
    lf->continue_token = NULL;
    lf->reason = NULL;
    lf->message = NULL;
    lf->code = 0;
}

void krc_list_framer_reset(struct krc_list_framer *lf)
{
    free_fields(lf);
    krc_buf_reset(&lf->val);
    lf->state = ST_BEGIN;
    lf->error = 0;
    krc_error_clear(&lf->last);
    lf->off = 0;
    lf->n_items = 0;
    lf->n_skipped = 0;
    lf->seen_items = 0;
    lf->skipping = 0;
    lf->skip_size = 0;
    lf->key = KEY_OTHER;
    lf->vkind = 0;
    lf->vdepth = 0;
    lf->vin_str = 0;
    lf->vesc = 0;
}

void krc_list_framer_cleanup(struct krc_list_framer *lf)
{
    if (lf == NULL) {
        return;
    }
    free_fields(lf);
    krc_buf_cleanup(&lf->val);
}

void krc_list_framer_set_skip(struct krc_list_framer *lf, krc_list_skip_cb on_skip)
{
    lf->on_skip = on_skip;
}

size_t krc_list_framer_item_count(const struct krc_list_framer *lf)
{
    return lf->n_items;
}

size_t krc_list_framer_skipped_count(const struct krc_list_framer *lf)
{
    return lf->n_skipped;
}

const char *krc_list_framer_resource_version(const struct krc_list_framer *lf)
{
    return lf->resource_version;
}

const char *krc_list_framer_continue(const struct krc_list_framer *lf)
{
    return lf->continue_token != NULL && lf->continue_token[0] != '\0' ? lf->continue_token : NULL;
}

const char *krc_list_framer_kind(const struct krc_list_framer *lf)
{
    return lf->kind;
}

/* Record a sticky error; the message is already in lf->last. */
static int fail_sticky(struct krc_list_framer *lf, struct krc_error *err)
{
    lf->state = ST_FAILED;
    lf->error = lf->last.code;
    if (err != NULL) {
        *err = lf->last;
    }
    return lf->error;
}

static int fail(struct krc_list_framer *lf, struct krc_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(struct krc_list_framer *lf, struct krc_error *err, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    krc_error_vset(&lf->last, code, fmt, ap);
    va_end(ap);
    return fail_sticky(lf, err);
}

static int fail_char(struct krc_list_framer *lf, struct krc_error *err, const char *expected,
                     unsigned char c, size_t at)
{
    if (c >= 0x20 && c < 0x7f) {
        return fail(lf, err, KRC_EPARSE, "list: %s, got '%c' at offset %zu", expected, c, at);
    }
    return fail(lf, err, KRC_EPARSE, "list: %s, got byte 0x%02x at offset %zu", expected, c, at);
}

static inline int is_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static int starts_value(unsigned char c)
{
    return c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' ||
           c == 'f' || c == 'n';
}

static int is_scalar_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '+' ||
           c == '-' || c == '.';
}

static void value_start(struct krc_list_framer *lf, unsigned char c)
{
    krc_buf_reset(&lf->val);
    lf->val_start = lf->off;
    lf->vdepth = 0;
    lf->vin_str = 0;
    lf->vesc = 0;
    if (c == '{' || c == '[') {
        lf->vkind = VK_CONTAINER;
    } else if (c == '"') {
        lf->vkind = VK_STRING;
    } else {
        lf->vkind = VK_SCALAR;
    }
}

/* Offset of the first '"' or '\\' in p[i..n), or n. Strings in Kubernetes
 * objects are short, so a word-at-a-time loop beats two memchr calls. */
static size_t find_quote_or_backslash(const char *p, size_t n, size_t i)
{
    static const uint64_t ones = 0x0101010101010101ULL;
    static const uint64_t highs = 0x8080808080808080ULL;

    while (i + 8 <= n) {
        uint64_t x;
        uint64_t q;
        uint64_t b;

        memcpy(&x, p + i, 8);
        q = x ^ (ones * '"');
        b = x ^ (ones * '\\');
        if ((((q - ones) & ~q) | ((b - ones) & ~b)) & highs) {
            break;
        }
        i += 8;
    }
    while (i < n && p[i] != '"' && p[i] != '\\') {
        i++;
    }
    return i;
}

/* Find where the value being accumulated ends, looking only at strings and
 * bracket depth (the grammar is checked afterwards). Returns the number of
 * bytes of p that belong to the value; *done when it is complete. */
static size_t light_scan(struct krc_list_framer *lf, const char *p, size_t n, int *done)
{
    size_t i = 0;

    *done = 0;
    if (lf->vkind == VK_SCALAR) {
        while (i < n && is_scalar_char((unsigned char)p[i])) {
            i++;
        }
        *done = i < n; /* the delimiter is not part of the value */
        return i;
    }
    while (i < n) {
        if (lf->vin_str) {
            if (lf->vesc) {
                lf->vesc = 0;
                i++;
                continue;
            }
            i = find_quote_or_backslash(p, n, i);
            if (i >= n) {
                return n;
            }
            if (p[i] == '\\') {
                lf->vesc = 1;
                i++;
                continue;
            }
            i++;
            lf->vin_str = 0;
            if (lf->vkind == VK_STRING) {
                *done = 1;
                return i;
            }
            continue;
        }
        switch (p[i++]) {
        case '"':
            lf->vin_str = 1;
            break;
        case '{':
        case '[':
            lf->vdepth++;
            break;
        case '}':
        case ']':
            if (--lf->vdepth == 0) {
                *done = 1;
                return i;
            }
            break;
        default:
            break;
        }
    }
    return i;
}

static int copy_str(const struct krc_jscan_str *s, char **ret)
{
    char *c = krc_malloc(s->raw_len + 1);
    size_t n;

    if (c == NULL) {
        return KRC_ENOMEM;
    }
    n = krc_jscan_unescape(s, c);
    c[n] = '\0';
    krc_free(*ret);
    *ret = c;
    return 0;
}

/* Validate the complete value [v, v+n) at body offset lf->val_start as one
 * JSON value, with jscan positioned at its start. */
static void scan_init(struct krc_list_framer *lf, struct krc_jscan *s, const char *v, size_t n)
{
    krc_jscan_init(s, v, n, "list");
    s->base = lf->val_start;
}

static int classify_key(struct krc_list_framer *lf, const char *v, size_t n, struct krc_error *err)
{
    struct krc_jscan s;
    struct krc_jscan_str k;
    int rc;

    scan_init(lf, &s, v, n);
    rc = krc_jscan_string(&s, &k, &lf->last);
    if (rc == 0) {
        rc = krc_jscan_end(&s, &lf->last);
    }
    if (rc < 0) {
        return fail_sticky(lf, err);
    }
    if (KRC_JSCAN_EQ(&k, "items")) {
        lf->key = KEY_ITEMS;
    } else if (KRC_JSCAN_EQ(&k, "metadata")) {
        lf->key = KEY_METADATA;
    } else if (KRC_JSCAN_EQ(&k, "kind")) {
        lf->key = KEY_KIND;
    } else if (KRC_JSCAN_EQ(&k, "code")) {
        lf->key = KEY_CODE;
    } else if (KRC_JSCAN_EQ(&k, "reason")) {
        lf->key = KEY_REASON;
    } else if (KRC_JSCAN_EQ(&k, "message")) {
        lf->key = KEY_MESSAGE;
    } else {
        lf->key = KEY_OTHER;
    }
    if (lf->key == KEY_ITEMS) {
        if (lf->seen_items) {
            return fail(lf, err, KRC_EPARSE, "list: duplicate key \"items\" at offset %zu",
                        lf->val_start);
        }
        lf->seen_items = 1;
    }
    return 0;
}

static int take_metadata(struct krc_list_framer *lf, struct krc_jscan *s)
{
    struct krc_jscan_str k;
    struct krc_jscan_str v;
    int t = krc_jscan_peek(s, &lf->last);
    int rc;

    if (t == KRC_JSON_NULL) {
        return krc_jscan_null(s, &lf->last);
    }
    rc = krc_jscan_object_begin(s, &lf->last);
    while (rc >= 0 && (rc = krc_jscan_object_next(s, &k, &lf->last)) > 0) {
        int rv = KRC_JSCAN_EQ(&k, "resourceVersion");
        int cont = KRC_JSCAN_EQ(&k, "continue");

        if ((rv || cont) && krc_jscan_peek(s, &lf->last) == KRC_JSON_STRING) {
            rc = krc_jscan_string(s, &v, &lf->last);
            if (rc == 0) {
                rc = copy_str(&v, rv ? &lf->resource_version : &lf->continue_token);
                if (rc < 0) {
                    krc_error_set(&lf->last, rc, "list: out of memory");
                }
            }
        } else {
            rc = krc_jscan_skip(s, NULL, &lf->last);
        }
    }
    return rc;
}

/* A complete top-level value other than the items array. */
static int take_top_value(struct krc_list_framer *lf, const char *v, size_t n,
                          struct krc_error *err)
{
    struct krc_jscan s;
    struct krc_jscan_str str;
    int64_t num;
    int t;
    int rc;

    scan_init(lf, &s, v, n);
    t = krc_jscan_peek(&s, &lf->last);
    if (t < 0) {
        return fail_sticky(lf, err);
    }
    switch (lf->key) {
    case KEY_ITEMS:
        if (t != KRC_JSON_NULL) {
            return fail(lf, err, KRC_EPARSE,
                        "list: items must be an array or null, got %s at offset %zu",
                        krc_jscan_type_name(t), lf->val_start);
        }
        rc = krc_jscan_null(&s, &lf->last);
        break;
    case KEY_METADATA:
        if (t != KRC_JSON_OBJECT && t != KRC_JSON_NULL) {
            return fail(lf, err, KRC_EPARSE,
                        "list: metadata must be an object, got %s at offset %zu",
                        krc_jscan_type_name(t), lf->val_start);
        }
        rc = take_metadata(lf, &s);
        break;
    case KEY_KIND:
    case KEY_REASON:
    case KEY_MESSAGE:
        if (t != KRC_JSON_STRING) {
            rc = krc_jscan_skip(&s, NULL, &lf->last);
            break;
        }
        rc = krc_jscan_string(&s, &str, &lf->last);
        if (rc == 0) {
            rc = copy_str(&str, lf->key == KEY_KIND     ? &lf->kind
                                : lf->key == KEY_REASON ? &lf->reason
                                                        : &lf->message);
            if (rc < 0) {
                return fail(lf, err, rc, "list: out of memory");
            }
        }
        break;
    case KEY_CODE:
        if (t == KRC_JSON_NUMBER && krc_jscan_int64(&s, &num, NULL) == 0 && num >= 0 &&
            num < 1000) {
            lf->code = (int)num;
            rc = 0;
            break;
        }
        rc = krc_jscan_skip(&s, NULL, &lf->last);
        break;
    default:
        rc = krc_jscan_skip(&s, NULL, &lf->last);
        break;
    }
    if (rc >= 0) {
        rc = krc_jscan_end(&s, &lf->last);
    }
    if (rc < 0 && lf->vkind == VK_SCALAR) {
        /* the scanner saw the token without its delimiter: say what it was */
        return fail(lf, err, KRC_EPARSE, "list: invalid literal or number '%.*s' at offset %zu",
                    (int)(n > 32 ? 32 : n), v, lf->val_start);
    }
    if (rc < 0) {
        return fail_sticky(lf, err);
    }
    return 0;
}

static int take_item(struct krc_list_framer *lf, const char *v, size_t n, krc_list_item_cb on_item,
                     void *userdata, struct krc_error *err)
{
    struct krc_jscan s;
    char what[48];
    int rc;

    snprintf(what, sizeof(what), "list: items[%zu]", lf->n_items + lf->n_skipped);
    krc_jscan_init(&s, v, n, what);
    s.base = lf->val_start;
    rc = krc_jscan_skip(&s, NULL, &lf->last);
    if (rc >= 0) {
        rc = krc_jscan_end(&s, &lf->last);
    }
    if (rc < 0) {
        return fail_sticky(lf, err);
    }
    lf->n_items++;
    rc = on_item(v, n, userdata);
    if (rc != 0) {
        krc_error_set(&lf->last, rc < 0 ? rc : KRC_ECANCELED,
                      "list: stopped by the item callback at items[%zu]",
                      lf->n_items - 1 + lf->n_skipped);
        lf->state = ST_FAILED;
        lf->error = lf->last.code;
        if (err != NULL) {
            *err = lf->last;
        }
        return rc;
    }
    return 0;
}

static int too_big(struct krc_list_framer *lf, struct krc_error *err)
{
    return fail(lf, err, KRC_ETOOBIG,
                "list: top-level value larger than the %zu-byte limit at offset %zu", lf->max_item,
                lf->val_start);
}

/* An item outgrew max_item: what is in lf->val plus p[0, n) is its start.
 * Keep its head in lf->val and scan on for its end without keeping it. */
static void skip_begin(struct krc_list_framer *lf, const char *p, size_t n)
{
    size_t head = lf->max_item < KRC_LIST_FRAMER_HEAD ? lf->max_item : KRC_LIST_FRAMER_HEAD;

    lf->skipping = 1;
    lf->skip_size = lf->val.len + n;
    if (lf->val.len > head) {
        lf->val.len = head;
        lf->val.data[head] = '\0';
    } else if (lf->val.len < head) {
        size_t more = head - lf->val.len < n ? head - lf->val.len : n;
        (void)krc_buf_append(&lf->val, p, more); /* without memory: a shorter head */
    }
}

/* The skipped item ended: name it to the callback and go on. */
static void skip_end(struct krc_list_framer *lf, void *userdata)
{
    size_t index = lf->n_items + lf->n_skipped;

    lf->n_skipped++;
    lf->skipping = 0;
    if (lf->on_skip != NULL) {
        lf->on_skip(index, lf->val.data, lf->val.len, lf->skip_size, userdata);
    }
    lf->skip_size = 0;
    krc_buf_reset(&lf->val);
    lf->state = ST_ITEMS_NEXT;
}

/* The bytes p[0..avail) read in a state inside a key, a top-level value or an
 * item, as far as that value goes: *ret_used says how many it took (all of
 * them when the value goes on in the next chunk); a complete value is handed
 * on. Returns 0, or what krc_list_framer_feed returns to stop. */
static int feed_value(struct krc_list_framer *lf, const char *p, size_t avail, size_t *ret_used,
                      krc_list_item_cb on_item, void *userdata, struct krc_error *err)
{
    int rc;
    int done;
    size_t n = light_scan(lf, p, avail, &done);
    const char *v;
    size_t vlen;

    if (lf->skipping) {
        lf->skip_size += n;
        *ret_used = n;
        lf->off += n;
        if (done) {
            skip_end(lf, userdata);
        }
        return 0;
    }
    if (lf->val.len == 0 && done) {
        v = p; /* whole value inside this chunk: no copy */
        vlen = n;
        if (vlen > lf->max_item) {
            if (lf->state != ST_ITEM) {
                return too_big(lf, err);
            }
            skip_begin(lf, p, n);
            *ret_used = n;
            lf->off += n;
            skip_end(lf, userdata);
            return 0;
        }
    } else {
        rc = krc_buf_append(&lf->val, p, n);
        if (rc == KRC_ETOOBIG && lf->state == ST_ITEM) {
            skip_begin(lf, p, n);
            *ret_used = n;
            lf->off += n;
            if (done) {
                skip_end(lf, userdata);
            }
            return 0;
        }
        if (rc == KRC_ETOOBIG) {
            return too_big(lf, err);
        }
        if (rc < 0) {
            return fail(lf, err, rc, "list: out of memory");
        }
        v = lf->val.data;
        vlen = lf->val.len;
    }
    *ret_used = n;
    lf->off += n;
    if (!done) {
        return 0; /* all of the chunk belonged to the value */
    }
    if (lf->state == ST_KEY) {
        rc = classify_key(lf, v, vlen, err);
        lf->state = ST_COLON;
    } else if (lf->state == ST_TOPVAL) {
        rc = take_top_value(lf, v, vlen, err);
        lf->state = ST_OBJ_NEXT;
    } else {
        rc = take_item(lf, v, vlen, on_item, userdata, err);
        lf->state = ST_ITEMS_NEXT;
    }
    krc_buf_reset(&lf->val);
    if (rc != 0) {
        lf->state = ST_FAILED;
        return rc;
    }
    return 0;
}

/* The byte c at offset lf->off read in a structural state (between keys,
 * values and items). *ret_used is 1, or 0 when c is to be read again as the
 * first byte of a value. Returns 0, or what krc_list_framer_feed returns. */
static int feed_structure(struct krc_list_framer *lf, unsigned char c, size_t *ret_used,
                          struct krc_error *err)
{
    size_t at = lf->off;
    int rc;

    *ret_used = 1;
    lf->off++;
    if (is_ws(c)) {
        return 0;
    }
    switch (lf->state) {
    case ST_BEGIN:
        if (c != '{') {
            if (starts_value(c)) {
                return fail(lf, err, KRC_EPARSE,
                            "list: body is a JSON %s, not an object, at offset %zu",
                            c == '['   ? "array"
                            : c == '"' ? "string"
                                       : "scalar",
                            at);
            }
            return fail_char(lf, err, "body is not JSON: expected '{'", c, at);
        }
        lf->state = ST_OBJ_FIRST;
        break;
    case ST_OBJ_FIRST:
    case ST_OBJ_KEY:
        if (c == '}' && lf->state == ST_OBJ_FIRST) {
            lf->state = ST_END;
        } else if (c == '"') {
            value_start(lf, c);
            lf->val_start = at;
            lf->vin_str = 1;
            rc = krc_buf_append_char(&lf->val, '"');
            if (rc < 0) {
                return rc == KRC_ETOOBIG ? too_big(lf, err)
                                         : fail(lf, err, rc, "list: out of memory");
            }
            lf->state = ST_KEY;
        } else {
            return fail_char(lf, err,
                             lf->state == ST_OBJ_FIRST ? "expected a string key or '}'"
                                                       : "expected a string key after ','",
                             c, at);
        }
        break;
    case ST_OBJ_NEXT:
        if (c == ',') {
            lf->state = ST_OBJ_KEY;
        } else if (c == '}') {
            lf->state = ST_END;
        } else {
            return fail_char(lf, err, "expected ',' or '}'", c, at);
        }
        break;
    case ST_COLON:
        if (c != ':') {
            return fail_char(lf, err, "expected ':' after an object key", c, at);
        }
        lf->state = ST_VALUE;
        break;
    case ST_VALUE:
        if (lf->key == KEY_ITEMS && c == '[') {
            lf->state = ST_ITEMS_FIRST;
            break;
        }
        if (!starts_value(c)) {
            return fail_char(lf, err, "expected a value", c, at);
        }
        /* re-read this byte as the first of the value */
        *ret_used = 0;
        lf->off--;
        value_start(lf, c);
        lf->state = ST_TOPVAL;
        break;
    case ST_ITEMS_FIRST:
    case ST_ITEM_START:
        if (c == ']' && lf->state == ST_ITEMS_FIRST) {
            lf->state = ST_OBJ_NEXT;
            break;
        }
        if (c != '{') {
            if (starts_value(c)) {
                return fail(lf, err, KRC_EPARSE, "list: items[%zu] is not an object at offset %zu",
                            lf->n_items + lf->n_skipped, at);
            }
            return fail_char(lf, err, "expected an item object", c, at);
        }
        *ret_used = 0;
        lf->off--;
        value_start(lf, c);
        lf->state = ST_ITEM;
        break;
    case ST_ITEMS_NEXT:
        if (c == ',') {
            lf->state = ST_ITEM_START;
        } else if (c == ']') {
            lf->state = ST_OBJ_NEXT;
        } else {
            return fail_char(lf, err, "expected ',' or ']' in items", c, at);
        }
        break;
    case ST_END:
        return fail_char(lf, err, "expected end of body after the list object", c, at);
    default:
        return fail(lf, err, KRC_EPARSE, "list: internal state error at offset %zu", at);
    }
    return 0;
}

int krc_list_framer_feed(struct krc_list_framer *lf, const char *data, size_t len,
                         krc_list_item_cb on_item, void *userdata, struct krc_error *err)
{
    size_t i = 0;
    size_t used = 0;
    int rc;

    if (lf->state == ST_FAILED) {
        if (err != NULL) {
            *err = lf->last;
        }
        return lf->error;
    }
    while (i < len) {
        if (lf->state == ST_KEY || lf->state == ST_TOPVAL || lf->state == ST_ITEM) {
            rc = feed_value(lf, data + i, len - i, &used, on_item, userdata, err);
        } else {
            /* structural states: one byte at a time */
            rc = feed_structure(lf, (unsigned char)data[i], &used, err);
        }
        if (rc != 0) {
            return rc;
        }
        i += used;
    }
    return 0;
}

static int status_code_to_error(int code)
{
    switch (code) {
    case 410:
        return KRC_EGONE;
    case 401:
    case 403:
        return KRC_EAUTH;
    case 429:
        return KRC_ERATELIMIT;
    case 404:
        return KRC_ENOTFOUND;
    default:
        return KRC_EHTTP;
    }
}

int krc_list_framer_finish(struct krc_list_framer *lf, struct krc_error *err)
{
    int rc;

    if (lf->state == ST_FAILED) {
        if (err != NULL) {
            *err = lf->last;
        }
        return lf->error;
    }
    if (lf->state != ST_END) {
        if (lf->state == ST_BEGIN) {
            return fail(lf, err, KRC_EPARSE, "list: empty body");
        }
        if (lf->state == ST_ITEM || lf->state == ST_ITEMS_NEXT || lf->state == ST_ITEM_START ||
            lf->state == ST_ITEMS_FIRST) {
            return fail(
                lf, err, KRC_EPARSE,
                "list: body truncated at offset %zu inside items (after %zu complete items)",
                lf->off, lf->n_items + lf->n_skipped);
        }
        return fail(lf, err, KRC_EPARSE, "list: body truncated at offset %zu", lf->off);
    }
    if (lf->kind != NULL && strcmp(lf->kind, "Status") == 0) {
        rc = fail(lf, err, status_code_to_error(lf->code),
                  "list: the server answered with a Status instead of a list: code %d, reason "
                  "%.64s: %.300s",
                  lf->code, lf->reason != NULL ? lf->reason : "(none)",
                  lf->message != NULL ? lf->message : "(no message)");
        lf->last.http_status = lf->code;
        if (err != NULL) {
            err->http_status = lf->code;
        }
        return rc;
    }
    if (!lf->seen_items) {
        return fail(lf, err, KRC_EPARSE, "list: body (kind %.64s) has no \"items\"",
                    lf->kind != NULL ? lf->kind : "absent");
    }
    return 0;
}
