/* thrift_glue.h: what the rest of Stagger includes to use Thrift.
 *
 * Brings in the generated API types with g_autoptr() support, adds the same
 * support to the library's own base types, and declares helpers to turn a
 * struct into bytes and back (binary protocol) and to hash a struct by its
 * canonical encoding. Any thread.
 */
#pragma once

#include <glib-object.h>
#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/thrift_struct.h>
#include <thrift/c_glib/protocol/thrift_protocol.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_transport.h>
#include <thrift/c_glib/processor/thrift_processor.h>
#include <thrift/c_glib/thrift_application_exception.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ThriftStruct, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ThriftTransport, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ThriftProtocol, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ThriftBinaryProtocol, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ThriftProcessor, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ThriftApplicationException, g_object_unref)

#include "api_autoptr.h"

G_BEGIN_DECLS

#define STG_THRIFT_ERROR (stg_thrift_error_quark ())
GQuark stg_thrift_error_quark (void);

typedef enum
{
  STG_THRIFT_ERROR_FAILED,
  STG_THRIFT_ERROR_TRAILING,   /* bytes left over after a struct */
} StgThriftError;

/* The binary-protocol encoding of @object. */
GBytes *stg_thrift_to_bytes (ThriftStruct *object, GError **error);

/* Reads @bytes (one binary-protocol struct) into @object, which must be a
 * fresh instance of the right type. Fails on short or trailing input. */
gboolean stg_thrift_from_bytes (ThriftStruct *object, GBytes *bytes, GError **error);

/* Like stg_thrift_from_bytes() on a new instance of @type. */
gpointer stg_thrift_new_from_bytes (GType type, GBytes *bytes, GError **error);

/* A deep copy, made by encoding and decoding. */
gpointer stg_thrift_copy (gpointer object);

/* A ThriftTransport read_all for transports whose read() may return less
 * than asked: calls read() until @len bytes came, or fails. */
gint32 stg_transport_read_all (ThriftTransport *transport, gpointer buf, guint32 len, GError **error);

/* The canonical encoding of a binary-protocol struct: fields in id order,
 * set elements and map entries sorted by their own encodings. Two structs are
 * equal exactly when their canonical encodings are. */
GBytes *stg_thrift_canonicalize (GBytes *encoded, GError **error);

/* Lower-case hex SHA-256 of the canonical encoding of @object. */
gchar *stg_thrift_hash (ThriftStruct *object, GError **error);

/* TRUE when @a and @b have the same canonical encoding. */
gboolean stg_thrift_equal (ThriftStruct *a, ThriftStruct *b);

G_END_DECLS
