/* json_protocol_private.h: what the JSON protocol's files share: the
 * object, its context stacks and the type tags. json_protocol.c owns the
 * object, json_context.c the contexts and tags, json_writer.c writes and
 * json_reader.c reads. Not for use outside src/api/. Any thread; one owner
 * at a time.
 */
#pragma once

#include "api/json_protocol.h"

typedef enum { CTX_TOP, CTX_LIST, CTX_PAIR } CtxKind;

typedef struct
{
  CtxKind kind;
  gboolean first;
  gboolean colon;   /* CTX_PAIR: the next value is a key */
} Ctx;

struct _StgJsonProtocol
{
  ThriftProtocol parent;

  GArray *wctx;     /* Ctx, the write contexts; [0] is the top level */
  GArray *rctx;     /* Ctx, the read contexts */
  gint peeked;      /* the lookahead byte, or -1 */
  guint depth;      /* open structs and containers while reading */
  gint64 nread;     /* bytes consumed (lookahead excluded) */
  gint64 nwritten;
};

/* The protocol a read or write call is made on: json_protocol.c's class
 * has these calls only, so a plain cast (the call files need nothing of
 * json_protocol.c). */
#define JSON(p) ((StgJsonProtocol *) (p))

/* Thrift's type tags in TJSONProtocol ("tf", "i8", ... "set"). */
typedef struct
{
  ThriftType type;
  const gchar *name;
} StgJsonTypeName;

#define STG_JSON_TYPE_NAMES 11
extern const StgJsonTypeName stg_json_type_names[STG_JSON_TYPE_NAMES];
extern const gchar stg_json_base64_chars[65];

/* Sets @error (unless already set) with THRIFT_PROTOCOL_ERROR @code;
 * returns FALSE. */
gboolean stg_json_fail (GError **error, gint code, const gchar *format, ...) G_GNUC_PRINTF (3, 4);

/* The context stacks: what separates the next value from the previous one. */
void stg_json_ctx_reset (GArray *stack);
void stg_json_ctx_push (GArray *stack, CtxKind kind);
void stg_json_ctx_pop (GArray *stack);
Ctx *stg_json_ctx_top (GArray *stack);
/* The separator the next value needs ('\0', ',' or ':') and advances. */
gchar stg_json_ctx_next (Ctx *c);
/* Whether the next value is an object key (numbers are then quoted). */
gboolean stg_json_ctx_quotes_numbers (GArray *stack);

/* Fill in the protocol's write and read calls. */
void stg_json_writer_class_init (ThriftProtocolClass *pc);
void stg_json_reader_class_init (ThriftProtocolClass *pc);
