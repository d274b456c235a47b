/* json_protocol.c: StgJsonProtocol, Thrift's TJSONProtocol format: the
 * object, whose class json_writer.c (the write calls) and json_reader.c
 * (the read calls) fill; both use the context stacks and type tags of
 * json_context.c.
 *
 * Owns two stacks of JSON contexts (one for writing, one for reading) and a
 * one-byte lookahead. Any thread; one owner at a time.
 */
#include "config.h"

#include "api/json_protocol_private.h"

G_DEFINE_TYPE (StgJsonProtocol, stg_json_protocol, THRIFT_TYPE_PROTOCOL)

static void
stg_json_protocol_finalize (GObject *object)
{
  StgJsonProtocol *self = JSON (object);

  g_array_unref (self->wctx);
  g_array_unref (self->rctx);
  G_OBJECT_CLASS (stg_json_protocol_parent_class)->finalize (object);
}

static void
stg_json_protocol_class_init (StgJsonProtocolClass *klass)
{
  ThriftProtocolClass *pc = THRIFT_PROTOCOL_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = stg_json_protocol_finalize;

  stg_json_writer_class_init (pc);
  stg_json_reader_class_init (pc);
}

static void
stg_json_protocol_init (StgJsonProtocol *self)
{
  self->wctx = g_array_new (FALSE, FALSE, sizeof (Ctx));
  self->rctx = g_array_new (FALSE, FALSE, sizeof (Ctx));
  stg_json_ctx_reset (self->wctx);
  stg_json_ctx_reset (self->rctx);
  self->peeked = -1;
}

ThriftProtocol *
stg_json_protocol_new (ThriftTransport *transport)
{
  return g_object_new (STG_TYPE_JSON_PROTOCOL, "transport", transport, NULL);
}
