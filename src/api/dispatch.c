/* dispatch.c: StgDispatch, the generated processor over memory transports.
 * Owns the processor (which holds the handler). Main-loop thread only. */
#include "config.h"

#include <thrift/c_glib/thrift_application_exception.h>

#include "api/dispatch.h"
#include "api/json_protocol.h"
#include "common/binary_protocol.h"
#include "common/mem_transport.h"

G_DEFINE_QUARK (stg-dispatch-error-quark, stg_dispatch_error)

struct _StgDispatch
{
  ThriftProcessor *processor;   /* (owned) */
  ApiStaggerSchedulerHandler *handler;   /* (owned) */
  gsize max_reply;
};

ThriftProtocol *
stg_protocol_binary (ThriftTransport *transport)
{
  return stg_binary_protocol_new (transport);
}

ThriftProtocol *
stg_protocol_json (ThriftTransport *transport)
{
  return stg_json_protocol_new (transport);
}

StgDispatch *
stg_dispatch_new (gpointer handler, gsize max_reply)
{
  StgDispatch *d = g_new0 (StgDispatch, 1);

  d->handler = g_object_ref (handler);
  d->processor = g_object_new (API_TYPE_STAGGER_SCHEDULER_PROCESSOR, "handler", handler, NULL);
  d->max_reply = max_reply;
  return d;
}

void
stg_dispatch_free (StgDispatch *dispatch)
{
  if (dispatch == NULL)
    return;
  g_clear_object (&dispatch->processor);
  g_clear_object (&dispatch->handler);
  g_free (dispatch);
}

/* A TApplicationException reply {1: string message, 2: i32 type}, written
 * by hand: the library's own exception object leaks when finalized. */
static GBytes *
exception_bytes (StgDispatch *d, StgProtocolFactory writer, const gchar *name, gint32 seqid,
                 gint32 type, const gchar *text, GError **error)
{
  g_autoptr (StgMemTransport) out = stg_mem_transport_new (NULL, d->max_reply);
  g_autoptr (ThriftProtocol) p = writer (THRIFT_TRANSPORT (out));

  if (thrift_protocol_write_message_begin (p, name, T_EXCEPTION, seqid, error) < 0 ||
      thrift_protocol_write_struct_begin (p, "TApplicationException", error) < 0 ||
      thrift_protocol_write_field_begin (p, "message", T_STRING, 1, error) < 0 ||
      thrift_protocol_write_string (p, text, error) < 0 ||
      thrift_protocol_write_field_end (p, error) < 0 ||
      thrift_protocol_write_field_begin (p, "type", T_I32, 2, error) < 0 ||
      thrift_protocol_write_i32 (p, type, error) < 0 ||
      thrift_protocol_write_field_end (p, error) < 0 ||
      thrift_protocol_write_field_stop (p, error) < 0 ||
      thrift_protocol_write_struct_end (p, error) < 0 ||
      thrift_protocol_write_message_end (p, error) < 0)
    return NULL;
  return stg_mem_transport_steal_output (out);
}

/* The header of @request: its method name, type and sequence id. */
static gboolean
read_header (StgProtocolFactory reader, GBytes *request, gchar **name, ThriftMessageType *type,
             gint32 *seqid)
{
  g_autoptr (StgMemTransport) in = stg_mem_transport_new (request, 0);
  g_autoptr (ThriftProtocol) p = reader (THRIFT_TRANSPORT (in));

  return thrift_protocol_read_message_begin (p, name, type, seqid, NULL) >= 0;
}

/* Whether one of the services serves @name. */
static gboolean
known_method (StgDispatch *d, const gchar *name)
{
  return g_hash_table_contains (API_READ_ONLY_SCHEDULER_PROCESSOR (d->processor)->process_map, name) ||
         g_hash_table_contains (API_AURORA_SCHEDULER_MANAGER_PROCESSOR (d->processor)->process_map, name);
}

GBytes *
stg_dispatch_process (StgDispatch *dispatch, StgProtocolFactory protocol, GBytes *request,
                      const StgCaller *caller, GError **error)
{
  return stg_dispatch_process_with (dispatch, protocol, protocol, request, caller, error);
}

GBytes *
stg_dispatch_process_with (StgDispatch *dispatch, StgProtocolFactory reader,
                           StgProtocolFactory writer, GBytes *request, const StgCaller *caller,
                           GError **error)
{
  g_autoptr (StgMemTransport) in = stg_mem_transport_new (request, 0);
  g_autoptr (StgMemTransport) out = stg_mem_transport_new (NULL, dispatch->max_reply);
  g_autoptr (ThriftProtocol) in_proto = reader (THRIFT_TRANSPORT (in));
  g_autoptr (ThriftProtocol) out_proto = writer (THRIFT_TRANSPORT (out));
  g_autoptr (GError) local = NULL;

  g_autofree gchar *name = NULL;
  ThriftMessageType type = T_CALL;
  gint32 seqid = 0;

  /* What the library would refuse itself (leaking as it does) is refused
   * here: calls that are not calls, and methods nobody serves. */
  if (read_header (reader, request, &name, &type, &seqid))
    {
      if (type != T_CALL && type != T_ONEWAY)
        {
          g_autofree gchar *text = g_strdup_printf ("message type %d is not a call", (gint) type);
          return exception_bytes (dispatch, writer, name, seqid,
                                  THRIFT_APPLICATION_EXCEPTION_ERROR_INVALID_MESSAGE_TYPE, text, error);
        }
      if (!known_method (dispatch, name))
        {
          g_autofree gchar *text = g_strdup_printf ("unknown method '%s'", name);
          return exception_bytes (dispatch, writer, name, seqid,
                                  THRIFT_APPLICATION_EXCEPTION_ERROR_UNKNOWN_METHOD, text, error);
        }
    }
  if (STG_IS_HANDLER (dispatch->handler))
    stg_handler_set_caller (STG_HANDLER (dispatch->handler), caller);
  gboolean ok = thrift_processor_process (dispatch->processor, in_proto, out_proto, &local);
  if (STG_IS_HANDLER (dispatch->handler))
    stg_handler_set_caller (STG_HANDLER (dispatch->handler), NULL);
  if (ok)
    return stg_mem_transport_steal_output (out);
  if (name == NULL)
    {
      g_set_error (error, STG_DISPATCH_ERROR, STG_DISPATCH_ERROR_MALFORMED,
                   "unreadable message: %s", local ? local->message : "no header");
      return NULL;
    }
  g_autofree gchar *text = g_strdup_printf ("cannot read the call to %s: %s", name,
                                            local ? local->message : "unknown error");
  return exception_bytes (dispatch, writer, name, seqid,
                          THRIFT_APPLICATION_EXCEPTION_ERROR_PROTOCOL_ERROR, text, error);
}
