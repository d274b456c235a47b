/* body_buffer.c: request bodies that grow as bytes arrive, within a budget
 * shared by a daemon's servers and divided between client addresses (see
 * body_buffer.h). Calls only GLib and GIO's address parsing; main loop.
 */
#include "config.h"

#include <string.h>

#include "api/body_buffer.h"

#define FIRST_CAP (64 * 1024)

/* The key an address is counted under: an IPv4 address (also when written
 * as IPv4-mapped IPv6), an IPv6 address's /64, or "unknown". */
static gchar *
address_key (const gchar *address)
{
  g_autoptr (GInetAddress) inet = address ? g_inet_address_new_from_string (address) : NULL;

  if (inet == NULL)
    return g_strdup ("unknown");
  if (g_inet_address_get_family (inet) == G_SOCKET_FAMILY_IPV4)
    return g_inet_address_to_string (inet);
  guint8 b[16];
  static const guint8 mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
  memcpy (b, g_inet_address_to_bytes (inet), sizeof b);
  if (memcmp (b, mapped, sizeof mapped) == 0)
    return g_strdup_printf ("%u.%u.%u.%u", b[12], b[13], b[14], b[15]);
  memset (b + 8, 0, 8);
  g_autoptr (GInetAddress) prefix = g_inet_address_new_from_bytes (b, G_SOCKET_FAMILY_IPV6);
  g_autofree gchar *text = g_inet_address_to_string (prefix);
  return g_strconcat (text, "/64", NULL);
}

void
stg_body_buffer_init (StgBodyBuffer *buffer, StgBodyBudget *budget, const gchar *address,
                      gsize want)
{
  memset (buffer, 0, sizeof *buffer);
  buffer->budget = budget;
  buffer->address = address_key (address);
  buffer->want = want;
}

/* What @address holds of @b. */
static gsize
held_by (const StgBodyBudget *b, const gchar *address)
{
  const gsize *held = b->held ? g_hash_table_lookup (b->held, address) : NULL;
  return held ? *held : 0;
}

/* Counts @delta bytes (positive or negative) for @address. */
static void
hold (StgBodyBudget *b, const gchar *address, gssize delta)
{
  if (b->held == NULL)
    b->held = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  gsize *held = g_hash_table_lookup (b->held, address);
  if (held == NULL)
    {
      held = g_new0 (gsize, 1);
      g_hash_table_insert (b->held, g_strdup (address), held);
    }
  *held = delta < 0 ? *held - MIN (*held, (gsize) -delta) : *held + (gsize) delta;
  if (*held == 0)
    g_hash_table_remove (b->held, address);
  if (g_hash_table_size (b->held) == 0)
    g_clear_pointer (&b->held, g_hash_table_unref);
}

/* Whether @buffer may grow by @more bytes to @cap (see body_buffer.h). */
static gboolean
budget_allows (const StgBodyBuffer *buffer, gsize cap, gsize more, GError **error)
{
  const StgBodyBudget *b = buffer->budget;

  if (b == NULL || b->max == 0)
    return TRUE;
  gsize held = held_by (b, buffer->address);
  if (b->per_address > 0 && held + more > b->per_address)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
                   "unfinished messages from %s hold %" G_GSIZE_FORMAT
                   " bytes already (at most %" G_GSIZE_FORMAT " per address)",
                   buffer->address, held, b->per_address);
      return FALSE;
    }
  gsize reserve = MIN (b->reserve, b->max);
  if (b->used + more <= b->max - reserve)
    return TRUE;
  gsize size = buffer->want > 0 ? buffer->want : cap;
  if (size <= STG_BODY_SMALL && b->used + more <= b->max &&
      held + more <= reserve / STG_BODY_RESERVE_SHARES)
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
               "unfinished messages hold %" G_GSIZE_FORMAT
               " bytes already (at most %" G_GSIZE_FORMAT ", the last %" G_GSIZE_FORMAT
               " kept for messages of at most %d bytes)",
               b->used, b->max, reserve, STG_BODY_SMALL);
  return FALSE;
}

guint8 *
stg_body_buffer_space (StgBodyBuffer *buffer, gsize n, gsize *avail, GError **error)
{
  if (buffer->len + n > buffer->cap)
    {
      gsize cap = MAX (buffer->cap * 2, FIRST_CAP);
      while (cap < buffer->len + n)
        cap *= 2;
      if (buffer->want >= buffer->len + n)
        cap = MIN (cap, buffer->want);
      gsize more = cap - buffer->cap;
      if (!budget_allows (buffer, cap, more, error))
        return NULL;
      buffer->data = g_realloc (buffer->data, cap);
      buffer->cap = cap;
      if (buffer->budget != NULL)
        {
          buffer->budget->used += more;
          hold (buffer->budget, buffer->address, (gssize) more);
        }
    }
  *avail = buffer->cap - buffer->len;
  return buffer->data + buffer->len;
}

void
stg_body_buffer_grew (StgBodyBuffer *buffer, gsize n)
{
  g_return_if_fail (buffer->len + n <= buffer->cap);
  buffer->len += n;
}

gboolean
stg_body_buffer_append (StgBodyBuffer *buffer, const guint8 *bytes, gsize n, GError **error)
{
  gsize avail;

  if (n == 0)
    return TRUE;
  guint8 *space = stg_body_buffer_space (buffer, n, &avail, error);
  if (space == NULL)
    return FALSE;
  memcpy (space, bytes, n);
  stg_body_buffer_grew (buffer, n);
  return TRUE;
}

static void
give_back (StgBodyBuffer *buffer)
{
  StgBodyBudget *b = buffer->budget;

  if (b != NULL && buffer->cap > 0)
    {
      b->used -= MIN (buffer->cap, b->used);
      hold (b, buffer->address, -(gssize) buffer->cap);
    }
  g_clear_pointer (&buffer->address, g_free);
  buffer->cap = 0;
  buffer->len = 0;
}

GBytes *
stg_body_buffer_steal (StgBodyBuffer *buffer)
{
  gsize len = buffer->len;
  guint8 *data = g_steal_pointer (&buffer->data);

  give_back (buffer);
  return data != NULL ? g_bytes_new_take (data, len) : g_bytes_new (NULL, 0);
}

void
stg_body_buffer_clear (StgBodyBuffer *buffer)
{
  g_clear_pointer (&buffer->data, g_free);
  give_back (buffer);
}
