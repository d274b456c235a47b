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
  StgHandler *handler;          /* (owned) */
  gsize max_reply;
  guint64 calls;
  guint64 exceptions;
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
stg_dispatch_new (StgHandler *handler, gsize max_reply)
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

/* The reply for a request whose arguments could not be read: a
 * TApplicationException naming what went wrong. */
static GBytes *
exception_reply (StgDispatch *d, StgProtocolFactory reader, StgProtocolFactory writer,
                 GBytes *request, const GError *cause, GError **error)
{
  g_autoptr (StgMemTransport) in = stg_mem_transport_new (request, 0);
  g_autoptr (ThriftProtocol) in_proto = reader (THRIFT_TRANSPORT (in));
  g_autofree gchar *name = NULL;
  ThriftMessageType type;
  gint32 seqid;

  if (thrift_protocol_read_message_begin (in_proto, &name, &type, &seqid, NULL) < 0)
    {
      g_set_error (error, STG_DISPATCH_ERROR, STG_DISPATCH_ERROR_MALFORMED,
                   "unreadable message: %s", cause ? cause->message : "no header");
      return NULL;
    }

  g_autoptr (StgMemTransport) out = stg_mem_transport_new (NULL, d->max_reply);
  g_autoptr (ThriftProtocol) out_proto = writer (THRIFT_TRANSPORT (out));
  g_autofree gchar *text = g_strdup_printf ("cannot read the call to %s: %s", name,
                                            cause ? cause->message : "unknown error");
  /* TApplicationException {1: string message, 2: i32 type}, written by hand:
   * the library's own object leaks on finalize. */
  if (thrift_protocol_write_message_begin (out_proto, name, T_EXCEPTION, seqid, error) < 0 ||
      thrift_protocol_write_struct_begin (out_proto, "TApplicationException", error) < 0 ||
      thrift_protocol_write_field_begin (out_proto, "message", T_STRING, 1, error) < 0 ||
      thrift_protocol_write_string (out_proto, text, error) < 0 ||
      thrift_protocol_write_field_end (out_proto, error) < 0 ||
      thrift_protocol_write_field_begin (out_proto, "type", T_I32, 2, error) < 0 ||
      thrift_protocol_write_i32 (out_proto, THRIFT_APPLICATION_EXCEPTION_ERROR_PROTOCOL_ERROR, error) < 0 ||
      thrift_protocol_write_field_end (out_proto, error) < 0 ||
      thrift_protocol_write_field_stop (out_proto, error) < 0 ||
      thrift_protocol_write_struct_end (out_proto, error) < 0 ||
      thrift_protocol_write_message_end (out_proto, error) < 0)
    return NULL;
  d->exceptions++;
  return stg_mem_transport_steal_output (out);
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

  dispatch->calls++;
  stg_handler_set_caller (dispatch->handler, caller);
  gboolean ok = thrift_processor_process (dispatch->processor, in_proto, out_proto, &local);
  stg_handler_set_caller (dispatch->handler, NULL);
  /* An unknown method counts as processed: the processor answers it with
   * an exception of its own. */
  if (ok)
    return stg_mem_transport_steal_output (out);
  return exception_reply (dispatch, reader, writer, request, local, error);
}

guint64
stg_dispatch_calls (StgDispatch *dispatch)
{
  return dispatch->calls;
}

guint64
stg_dispatch_exceptions (StgDispatch *dispatch)
{
  return dispatch->exceptions;
}
