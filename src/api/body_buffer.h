/* body_buffer.h: the bytes of a request still arriving, and what a server
 * lets all its unfinished requests hold together.
 *
 * A buffer grows as bytes arrive (doubling, never past the announced size),
 * never when the size is announced, so a client that announces 16 MiB and
 * stalls holds only what it sent. Every buffer of a server draws on one
 * StgBodyBudget; an append that would take the budget past its limit fails,
 * and the server drops that request. Used by the HTTP and TCP servers.
 * Main-loop thread only.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  gsize used;               /* bytes reserved by unfinished requests */
  gsize max;                /* 0: no limit */
} StgBodyBudget;

typedef struct
{
  StgBodyBudget *budget;    /* borrowed */
  guint8 *data;
  gsize len;
  gsize cap;                /* reserved from the budget */
  gsize want;               /* announced size, or 0 when unknown */
} StgBodyBuffer;

/* Starts an empty buffer drawing on @budget, for a body of @want bytes
 * (0: unknown). */
void stg_body_buffer_init (StgBodyBuffer *buffer, StgBodyBudget *budget, gsize want);

/* Appends @n bytes; FALSE (nothing appended) when the budget cannot give
 * the room. */
gboolean stg_body_buffer_append (StgBodyBuffer *buffer, const guint8 *bytes, gsize n);

/* Room for at least @n more bytes (*@avail: how many), to read into
 * directly; NULL when the budget cannot give it. Follow with
 * stg_body_buffer_grew() for the bytes written there. */
guint8 *stg_body_buffer_space (StgBodyBuffer *buffer, gsize n, gsize *avail);
void stg_body_buffer_grew (StgBodyBuffer *buffer, gsize n);

/* The bytes so far, handed over; the buffer is empty again and its
 * reservation returned. */
GBytes *stg_body_buffer_steal (StgBodyBuffer *buffer);

/* Frees the bytes and returns the reservation. */
void stg_body_buffer_clear (StgBodyBuffer *buffer);

G_END_DECLS
