/* dispatch.c: StgDispatch, the generated processor over memory transports.
 * Owns the processor (which holds the handler) and the reply cache: the
 * update queries' encoded answers are kept until the store's generation
 * moves (any commit), so a repeated read costs no store read and no
 * encoding. Main-loop thread only. */
#include "config.h"

#include <thrift/c_glib/thrift_application_exception.h>

#include <string.h>

#include "api/dispatch.h"
#include "api/json_protocol.h"
#include "api/metrics.h"
#include "api/reply_cache.h"
#include "api/response.h"
#include "common/binary_protocol.h"
#include "common/mem_transport.h"

G_DEFINE_QUARK (stg-dispatch-error-quark, stg_dispatch_error)

struct _StgDispatch
{
  ThriftProcessor *processor;   /* (owned) */
  ApiStaggerSchedulerHandler *handler;   /* (owned) */
  gsize max_reply;
  StgReplyCache *cache;             /* (owned) */
  StgMetrics *metrics;              /* (owned) calls by method */
  StgDispatchGeneration generation; /* (nullable) no cache without it */
  gpointer generation_data;
  StgDispatchRefusal refusal; /* (nullable) every call refused */
  gpointer refusal_data;
  ApiResponseCode refusal_code;
  gchar *refusal_cluster;
};

/* The reads whose answers depend only on their arguments, the caller and
 * what the store holds (not on the runtime's live view, as task queries
 * do). */
static const gchar *const CACHED[] = { "getJobUpdateSummaries", "getJobUpdateDetails" };

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

  d->handler = handler != NULL ? g_object_ref (handler) : NULL;
  d->processor = handler != NULL
                     ? g_object_new (API_TYPE_STAGGER_SCHEDULER_PROCESSOR, "handler", handler, NULL)
                     : g_object_new (API_TYPE_STAGGER_SCHEDULER_PROCESSOR, NULL);
  d->max_reply = max_reply;
  d->cache = stg_reply_cache_new ();
  d->metrics = stg_metrics_new ();
  return d;
}

void
stg_dispatch_set_generation (StgDispatch *dispatch, StgDispatchGeneration generation, gpointer data)
{
  dispatch->generation = generation;
  dispatch->generation_data = data;
}

void
stg_dispatch_refuse_all (StgDispatch *dispatch, ApiResponseCode code, const gchar *cluster,
                         StgDispatchRefusal why, gpointer data)
{
  dispatch->refusal = why;
  dispatch->refusal_data = data;
  dispatch->refusal_code = code;
  g_free (dispatch->refusal_cluster);
  dispatch->refusal_cluster = g_strdup (cluster);
}

void
stg_dispatch_free (StgDispatch *dispatch)
{
  if (dispatch == NULL)
    return;
  g_free (dispatch->refusal_cluster);
  g_clear_object (&dispatch->processor);
  g_clear_object (&dispatch->handler);
  stg_reply_cache_free (dispatch->cache);
  stg_metrics_free (dispatch->metrics);
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

/* The reply to a refused call to @name: every method returns a Response,
 * so its result struct holds one in field 0 ("success"). */
static GBytes *
refusal_bytes (StgDispatch *d, StgProtocolFactory writer, const gchar *name, gint32 seqid,
               GError **error)
{
  g_autoptr (StgMemTransport) out = stg_mem_transport_new (NULL, d->max_reply);
  g_autoptr (ThriftProtocol) p = writer (THRIFT_TRANSPORT (out));
  g_autoptr (ApiResponse) response = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autofree gchar *text = d->refusal (d->refusal_data);

  stg_response_fail (response, d->refusal_cluster, d->refusal_code, "%s", text);
  if (thrift_protocol_write_message_begin (p, name, T_REPLY, seqid, error) < 0 ||
      thrift_protocol_write_struct_begin (p, "result", error) < 0 ||
      thrift_protocol_write_field_begin (p, "success", T_STRUCT, 0, error) < 0 ||
      thrift_struct_write (THRIFT_STRUCT (response), p, error) < 0 ||
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
  return g_hash_table_contains (API_READ_ONLY_SCHEDULER_PROCESSOR (d->processor)->process_map,
                                name) ||
         g_hash_table_contains (API_AURORA_SCHEDULER_MANAGER_PROCESSOR (d->processor)->process_map,
                                name) ||
         g_hash_table_contains (API_AURORA_ADMIN_PROCESSOR (d->processor)->process_map, name) ||
         g_hash_table_contains (API_STAGGER_SCHEDULER_PROCESSOR (d->processor)->process_map, name);
}

/* The bytes @factory writes for a message header. */
static GBytes *
header_bytes (StgProtocolFactory factory, const gchar *name, ThriftMessageType type, gint32 seqid)
{
  g_autoptr (StgMemTransport) out = stg_mem_transport_new (NULL, 0);
  g_autoptr (ThriftProtocol) p = factory (THRIFT_TRANSPORT (out));

  if (thrift_protocol_write_message_begin (p, name, type, seqid, NULL) < 0)
    return NULL;
  return stg_mem_transport_steal_output (out);
}

/* What follows @head in @message, or NULL when @message does not start
 * with it. */
static GBytes *
after (GBytes *message, GBytes *head)
{
  gsize n = 0, h = 0;
  const guint8 *m = g_bytes_get_data (message, &n), *hd = g_bytes_get_data (head, &h);

  if (head == NULL || n < h || memcmp (m, hd, h) != 0)
    return NULL;
  return g_bytes_new_from_bytes (message, h, n - h);
}

/* The cache key of a call to @name: what makes two such calls the same.
 * NULL when the call is not cached. */
static GBytes *
cache_key (StgDispatch *d, StgProtocolFactory reader, StgProtocolFactory writer, GBytes *request,
           const gchar *name, ThriftMessageType type, gint32 seqid, const StgCaller *caller)
{
  gboolean cached = FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (CACHED); i++)
    cached = cached || g_str_equal (name, CACHED[i]);
  if (!cached || d->generation == NULL || type != T_CALL)
    return NULL;
  g_autoptr (GBytes) head = header_bytes (reader, name, type, seqid);
  g_autoptr (GBytes) args = after (request, head);
  if (args == NULL)
    return NULL;
  g_autoptr (GByteArray) key = g_byte_array_new ();
  g_autofree gchar *who = g_strdup_printf ("%p %p %d %s %s", (gpointer) reader, (gpointer) writer,
                                           caller ? (gint) caller->access : -1,
                                           caller && caller->user ? caller->user : "", name);
  g_byte_array_append (key, (const guint8 *) who, (guint) strlen (who) + 1);
  g_byte_array_append (key, g_bytes_get_data (args, NULL), (guint) g_bytes_get_size (args));
  return g_byte_array_free_to_bytes (g_steal_pointer (&key));
}

/* A reply made of a fresh header and a kept tail. */
static GBytes *
with_header (StgProtocolFactory writer, const gchar *name, gint32 seqid, GBytes *tail)
{
  g_autoptr (GBytes) head = header_bytes (writer, name, T_REPLY, seqid);
  GByteArray *reply = g_byte_array_new ();

  g_byte_array_append (reply, g_bytes_get_data (head, NULL), (guint) g_bytes_get_size (head));
  g_byte_array_append (reply, g_bytes_get_data (tail, NULL), (guint) g_bytes_get_size (tail));
  return g_byte_array_free_to_bytes (reply);
}

StgMetrics *
stg_dispatch_metrics (StgDispatch *dispatch)
{
  return dispatch->metrics;
}

GBytes *
stg_dispatch_process (StgDispatch *dispatch, StgProtocolFactory protocol, GBytes *request,
                      const StgCaller *caller, GError **error)
{
  return stg_dispatch_process_with (dispatch, protocol, protocol, request, caller, error);
}

static GBytes *process_inner (StgDispatch *dispatch, StgProtocolFactory reader,
                              StgProtocolFactory writer, GBytes *request, const StgCaller *caller,
                              gchar **method, GError **error);

GBytes *
stg_dispatch_process_with (StgDispatch *dispatch, StgProtocolFactory reader,
                           StgProtocolFactory writer, GBytes *request, const StgCaller *caller,
                           GError **error)
{
  g_autofree gchar *method = NULL;
  gint64 t0 = g_get_monotonic_time ();
  GBytes *reply = process_inner (dispatch, reader, writer, request, caller, &method, error);

  /* Only methods some service serves become label values. */
  stg_metrics_rpc (dispatch->metrics, method != NULL ? method : "(unknown)",
                   (gdouble) (g_get_monotonic_time () - t0) / 1e6);
  return reply;
}

static GBytes *
process_inner (StgDispatch *dispatch, StgProtocolFactory reader, StgProtocolFactory writer,
               GBytes *request, const StgCaller *caller, gchar **method, GError **error)
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
      if (known_method (dispatch, name) && dispatch->refusal != NULL)
        {
          *method = g_strdup (name);
          return type == T_ONEWAY ? g_bytes_new (NULL, 0)
                                  : refusal_bytes (dispatch, writer, name, seqid, error);
        }
      if (known_method (dispatch, name))
        *method = g_strdup (name);
      else
        {
          g_autofree gchar *text = g_strdup_printf ("unknown method '%s'", name);
          return exception_bytes (dispatch, writer, name, seqid,
                                  THRIFT_APPLICATION_EXCEPTION_ERROR_UNKNOWN_METHOD, text, error);
        }
    }
  g_autoptr (GBytes) key = name != NULL ? cache_key (dispatch, reader, writer, request, name, type,
                                                     seqid, caller)
                                        : NULL;
  guint64 generation = key != NULL ? dispatch->generation (dispatch->generation_data) : 0;
  if (key != NULL)
    {
      g_autoptr (GBytes) tail = stg_reply_cache_lookup (dispatch->cache, generation, key);
      if (tail != NULL)
        return with_header (writer, name, seqid, tail);
    }
  if (STG_IS_HANDLER (dispatch->handler))
    stg_handler_set_caller (STG_HANDLER (dispatch->handler), caller);
  gboolean ok = thrift_processor_process (dispatch->processor, in_proto, out_proto, &local);
  if (STG_IS_HANDLER (dispatch->handler))
    stg_handler_set_caller (STG_HANDLER (dispatch->handler), NULL);
  if (ok)
    {
      GBytes *reply = stg_mem_transport_steal_output (out);
      g_autoptr (GBytes) head = key != NULL ? header_bytes (writer, name, T_REPLY, seqid) : NULL;
      g_autoptr (GBytes) tail = head != NULL ? after (reply, head) : NULL;
      /* Only a generation that did not move while answering is trusted. */
      if (tail != NULL && dispatch->generation (dispatch->generation_data) == generation)
        stg_reply_cache_store (dispatch->cache, generation, key, tail);
      return reply;
    }
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
