/* body_buffer.h: the bytes of a request still arriving, and what a server
 * lets all its unfinished requests hold together.
 *
 * A buffer grows as bytes arrive (doubling, never past the announced size),
 * never when the size is announced, so a client that announces 16 MiB and
 * stalls holds only what it sent. Every buffer of a server draws on one
 * StgBodyBudget, which the HTTP and TCP servers of a daemon share. A
 * buffer may grow when, counting what it asks for:
 *
 *   1. its client address (an IPv4 address, or an IPv6 /64, where one
 *      client usually has many addresses) holds at most per_address, and
 *   2. all buffers hold at most max - reserve, or, for a small message
 *      (at most STG_BODY_SMALL bytes in all), at most max while its
 *      address holds at most reserve / STG_BODY_RESERVE_SHARES.
 *
 * So a few large senders can only refuse themselves: each address holds
 * at most its share, and small messages (a pulse, a read) from others
 * still find room when large ones have taken the rest. A buffer that
 * cannot grow fails with the reason, and the server drops that request.
 * Used by the HTTP and TCP servers. Main-loop thread only.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* A message of at most this many bytes may use the budget's reserve. */
#define STG_BODY_SMALL (64 * 1024)

/* One address may hold at most this fraction of the reserve. */
#define STG_BODY_RESERVE_SHARES 8

typedef struct
{
  gsize used;        /* bytes reserved by unfinished requests */
  gsize max;         /* 0: no limit */
  gsize per_address; /* the most one client address may hold; 0: no limit of its own */
  gsize reserve;     /* the last bytes of @max, kept for small messages */
  GHashTable *held;  /* (nullable) address key -> gsize* held; only while some is held */
} StgBodyBudget;

typedef struct
{
  StgBodyBudget *budget; /* borrowed */
  gchar *address;        /* the client's address key, for the budget */
  guint8 *data;
  gsize len;
  gsize cap;  /* reserved from the budget */
  gsize want; /* announced size, or 0 when unknown */
} StgBodyBuffer;

/* Starts an empty buffer drawing on @budget, for a body of @want bytes
 * (0: unknown) from the client at @address (an IP address as text;
 * nullable or unparsable: counted together as one unknown address). */
void stg_body_buffer_init (StgBodyBuffer *buffer, StgBodyBudget *budget, const gchar *address,
                           gsize want);

/* Appends @n bytes; FALSE (nothing appended) with @error when the budget
 * cannot give the room. */
gboolean stg_body_buffer_append (StgBodyBuffer *buffer, const guint8 *bytes, gsize n,
                                 GError **error);

/* Room for at least @n more bytes (*@avail: how many), to read into
 * directly; NULL with @error when the budget cannot give it. Follow with
 * stg_body_buffer_grew() for the bytes written there. */
guint8 *stg_body_buffer_space (StgBodyBuffer *buffer, gsize n, gsize *avail, GError **error);
void stg_body_buffer_grew (StgBodyBuffer *buffer, gsize n);

/* The bytes so far, handed over; the buffer is empty again and its
 * reservation returned. */
GBytes *stg_body_buffer_steal (StgBodyBuffer *buffer);

/* Frees the bytes and returns the reservation. */
void stg_body_buffer_clear (StgBodyBuffer *buffer);

G_END_DECLS
