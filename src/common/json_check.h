/* json_check.h: checks JSON text before any JSON parser sees it. json-glib
 * recurses once per nesting level, so deep input from a client would
 * overflow the stack; every caller that hands outside JSON to json-glib
 * (executor data, job files, web UI bodies, the Docker engine's and
 * staggerd's answers to their clients, the CLI's clusters file) checks it
 * here first, or loads it with stg_json_load(). Any thread.
 */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The nesting every JSON document of Stagger stays within: objects and
 * arrays open at once. Executor data and job files need fewer than ten. */
#define STG_JSON_NESTING_MAX 64

#define STG_JSON_CHECK_ERROR (stg_json_check_error_quark ())
GQuark stg_json_check_error_quark (void);
typedef enum { STG_JSON_CHECK_ERROR_FAILED, STG_JSON_CHECK_ERROR_TOO_DEEP } StgJsonCheckError;

/* Checks that no more than @max_depth objects and arrays are open at once
 * anywhere in @text (@len bytes, or up to its NUL when @len is negative),
 * looking past string contents and their escapes. Does not otherwise
 * validate the text: the parser does that. One pass, no recursion, no
 * allocation. Fails with STG_JSON_CHECK_ERROR_TOO_DEEP naming the byte
 * offset where the limit was passed. @text may be NULL (nothing to check). */
gboolean stg_json_check_depth (const gchar *text, gssize len, guint max_depth, GError **error);

/* Loads @text (@len bytes, or up to its NUL when @len is negative) into
 * @parser once its nesting is within STG_JSON_NESTING_MAX; FALSE with the
 * check's or the parser's error, or when there is no value (@text NULL,
 * empty or blank), so that on success the parser has a root. */
gboolean stg_json_load (JsonParser *parser, const gchar *text, gssize len, GError **error);

G_END_DECLS
