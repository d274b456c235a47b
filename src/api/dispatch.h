/* dispatch.h: one Thrift message in, one reply out.
 *
 * StgDispatch runs the generated StaggerScheduler processor over in-memory
 * transports, so every transport (framed TCP, HTTP) shares one path: it
 * hands over the bytes of one request and gets the bytes of the reply. A
 * request that cannot be read gets a TApplicationException reply when its
 * method name and sequence id can be read, and an error otherwise.
 * Main-loop thread only.
 */
#pragma once

#include "api/handler.h"

G_BEGIN_DECLS

#define STG_DISPATCH_ERROR (stg_dispatch_error_quark ())
GQuark stg_dispatch_error_quark (void);
typedef enum { STG_DISPATCH_ERROR_FAILED, STG_DISPATCH_ERROR_MALFORMED } StgDispatchError;

/* Makes a protocol (reader and writer) over a transport. */
typedef ThriftProtocol *(*StgProtocolFactory) (ThriftTransport *transport);

/* The binary protocol. */
ThriftProtocol *stg_protocol_binary (ThriftTransport *transport);

/* The JSON protocol (TJSONProtocol). */
ThriftProtocol *stg_protocol_json (ThriftTransport *transport);

typedef struct _StgDispatch StgDispatch;

/* A dispatcher for @handler (referenced): an StgHandler, or any
 * ApiStaggerSchedulerHandler (the benchmarks' no-op one), or NULL for one
 * that only refuses (stg_dispatch_refuse_all()); callers are only passed
 * on to an StgHandler. Replies larger than @max_reply bytes fail (0: no
 * limit). */
StgDispatch *stg_dispatch_new (gpointer handler, gsize max_reply);
void stg_dispatch_free (StgDispatch *dispatch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgDispatch, stg_dispatch_free)

/* The dispatcher's counts of calls by method (owned by it). */
typedef struct _StgMetrics StgMetrics;
StgMetrics *stg_dispatch_metrics (StgDispatch *dispatch);

/* A number that moves whenever what the store holds may have changed
 * (e.g. stg_store_commit_count()). */
typedef guint64 (*StgDispatchGeneration) (gpointer data);

/* Lets the dispatcher keep the update queries' answers while @generation
 * stays the same (none are kept until this is called). */
void stg_dispatch_set_generation (StgDispatch *dispatch, StgDispatchGeneration generation,
                                  gpointer data);

/* Why calls are refused: a new string, e.g. naming the leader. */
typedef gchar *(*StgDispatchRefusal) (gpointer data);

/* Makes every call of a known method answer, without running the handler,
 * with a Response of @code whose one detail is what @why returns, and
 * serverInfo naming @cluster (copied). */
void stg_dispatch_refuse_all (StgDispatch *dispatch, ApiResponseCode code, const gchar *cluster,
                              StgDispatchRefusal why, gpointer data);

/* Processes @request, read and answered with @protocol, for @caller
 * (NULL: trusted, anonymous). Returns the reply (empty for a oneway call), or NULL with
 * STG_DISPATCH_ERROR_MALFORMED when not even the message header reads. */
GBytes *stg_dispatch_process (StgDispatch *dispatch, StgProtocolFactory protocol,
                              GBytes *request, const StgCaller *caller, GError **error);

/* The same, read with @reader and answered with @writer (HTTP lets the
 * two differ). */
GBytes *stg_dispatch_process_with (StgDispatch *dispatch, StgProtocolFactory reader,
                                   StgProtocolFactory writer, GBytes *request,
                                   const StgCaller *caller, GError **error);

G_END_DECLS
