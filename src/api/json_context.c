/* json_context.c: what the JSON protocol's reader and writer share: its
 * context stacks, Thrift's type tags, the base64 alphabet and protocol
 * errors.
 *
 * A context says what separates the next value from the previous one:
 * nothing at the top, ',' in an array, and ':' then ',' alternately in an
 * object, where a key that is a number is quoted. Any thread; one owner
 * at a time.
 */
#include "config.h"

#include "api/json_protocol_private.h"

const StgJsonTypeName stg_json_type_names[STG_JSON_TYPE_NAMES] = {
  { T_BOOL, "tf" }, { T_BYTE, "i8" },    { T_I16, "i16" },    { T_I32, "i32" },
  { T_I64, "i64" }, { T_DOUBLE, "dbl" }, { T_STRING, "str" }, { T_STRUCT, "rec" },
  { T_MAP, "map" }, { T_LIST, "lst" },   { T_SET, "set" },
};

const gchar stg_json_base64_chars[65] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

gboolean
stg_json_fail (GError **error, gint code, const gchar *format, ...)
{
  va_list ap;

  va_start (ap, format);
  if (error != NULL && *error == NULL)
    *error = g_error_new_valist (THRIFT_PROTOCOL_ERROR, code, format, ap);
  va_end (ap);
  return FALSE;
}

/* ---- contexts ----------------------------------------------------------- */

void
stg_json_ctx_reset (GArray *stack)
{
  Ctx top = { CTX_TOP, TRUE, FALSE };

  g_array_set_size (stack, 0);
  g_array_append_val (stack, top);
}

void
stg_json_ctx_push (GArray *stack, CtxKind kind)
{
  Ctx c = { kind, TRUE, TRUE };

  g_array_append_val (stack, c);
}

void
stg_json_ctx_pop (GArray *stack)
{
  if (stack->len > 1)
    g_array_set_size (stack, stack->len - 1);
}

Ctx *
stg_json_ctx_top (GArray *stack)
{
  return &g_array_index (stack, Ctx, stack->len - 1);
}

/* The separator a context wants before its next value (0: none), and
 * advances it. */
gchar
stg_json_ctx_next (Ctx *c)
{
  gchar sep = 0;

  switch (c->kind)
    {
    case CTX_TOP:
      break;
    case CTX_LIST:
      sep = c->first ? 0 : ',';
      c->first = FALSE;
      break;
    case CTX_PAIR:
      if (c->first)
        {
          c->first = FALSE;
          c->colon = TRUE;
        }
      else
        {
          sep = c->colon ? ':' : ',';
          c->colon = !c->colon;
        }
      break;
    }
  return sep;
}

/* Numbers are quoted where they are the key of an object member. */
gboolean
stg_json_ctx_quotes_numbers (GArray *stack)
{
  Ctx *c = stg_json_ctx_top (stack);

  return c->kind == CTX_PAIR && c->colon;
}
