/* json_fields.h: reading the members of a JSON object through a table.
 *
 * A table lists every key an object may hold: its type, the range of a
 * number, where the value goes in the caller's struct, and the keys that are
 * known but refused (with the reason). One call checks them all: an unknown
 * key, a value of the wrong type, a number out of range, a missing required
 * key or a refused key is an error that names the key's JSON path
 * ("task.processes[2].max_failures"). Pure functions; any thread.
 */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define STG_JSON_FIELDS_ERROR (stg_json_fields_error_quark ())
GQuark stg_json_fields_error_quark (void);
typedef enum
{
  STG_JSON_FIELDS_ERROR_INVALID,
  STG_JSON_FIELDS_ERROR_REFUSED
} StgJsonFieldsError;

typedef enum
{
  STG_FIELD_STRING,  /* gchar *: a new copy; a previous value (the default) is freed */
  STG_FIELD_INT,     /* gint: a whole number in [min, max] */
  STG_FIELD_INT64,   /* gint64: a whole number in [min, max] */
  STG_FIELD_NUMBER,  /* gdouble: a number in [min, max] */
  STG_FIELD_BOOL,    /* gboolean */
  STG_FIELD_OBJECT,  /* JsonObject *: borrowed, for the caller to read further */
  STG_FIELD_ARRAY,   /* JsonArray *: borrowed */
  STG_FIELD_STRMAP,  /* JsonObject * whose values are all strings: borrowed */
  STG_FIELD_REFUSED, /* a key that is known but not accepted: its presence is an error */
} StgFieldKind;

/* Where a checked value is not kept. */
#define STG_FIELD_SKIP ((gssize) -1)

typedef struct
{
  const gchar *key;
  StgFieldKind kind;
  gssize offset;    /* of the destination in the caller's struct, or STG_FIELD_SKIP */
  gdouble min, max; /* INT, INT64 and NUMBER; both 0: any value the type holds */
  gboolean required;
  const gchar *why; /* REFUSED: the reason, as the end of a sentence */
} StgField;

/* Table rows: the key, then the struct and member the value goes to. */
/* clang-format off */
#define STG_FIELD_ROW(k, kind, type, member) { (k), (kind), G_STRUCT_OFFSET (type, member) }
#define STG_FIELD_RANGE(k, kind, type, member, lo, hi) \
  { (k), (kind), G_STRUCT_OFFSET (type, member), (lo), (hi) }
#define STG_FIELD_NEED(k, kind, type, member) \
  { (k), (kind), G_STRUCT_OFFSET (type, member), 0, 0, TRUE }
#define STG_FIELD_CHECK(k, kind) { (k), (kind), STG_FIELD_SKIP }
#define STG_FIELD_NO(k, reason) { (k), STG_FIELD_REFUSED, STG_FIELD_SKIP, 0, 0, FALSE, (reason) }
/* clang-format on */

/* Reads the members of @object (found at @path; "" for the root) against
 * @fields (ended by a row whose key is NULL) into @dest. Members that are
 * absent leave their destination alone, so it keeps the default the caller
 * put there. Fails on the first problem, with a message that starts with the
 * member's path. */
gboolean stg_json_fields_read (JsonObject *object, const gchar *path, const StgField *fields,
                               gpointer dest, GError **error);

/* "path[i]": a path for messages, a new string. */
gchar *stg_json_path_index (const gchar *path, guint index);

/* How a value reads in a message: "a string", "the number 3", "true", "an
 * object", "an array", "null". */
gchar *stg_json_describe (JsonNode *node);

G_END_DECLS
