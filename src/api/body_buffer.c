/* body_buffer.c: request bodies that grow as bytes arrive, within a
 * server-wide budget (see body_buffer.h). Calls only GLib; main loop.
 */
#include "config.h"

#include <string.h>

#include "api/body_buffer.h"

#define FIRST_CAP (64 * 1024)

void
stg_body_buffer_init (StgBodyBuffer *buffer, StgBodyBudget *budget, gsize want)
{
  memset (buffer, 0, sizeof *buffer);
  buffer->budget = budget;
  buffer->want = want;
}

guint8 *
stg_body_buffer_space (StgBodyBuffer *buffer, gsize n, gsize *avail)
{
  if (buffer->len + n > buffer->cap)
    {
      gsize cap = MAX (buffer->cap * 2, FIRST_CAP);
      while (cap < buffer->len + n)
        cap *= 2;
      if (buffer->want >= buffer->len + n)
        cap = MIN (cap, buffer->want);
      gsize more = cap - buffer->cap;
      StgBodyBudget *b = buffer->budget;
      if (b != NULL && b->max > 0 && b->used + more > b->max)
        return NULL;
      buffer->data = g_realloc (buffer->data, cap);
      buffer->cap = cap;
      if (b != NULL)
        b->used += more;
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
stg_body_buffer_append (StgBodyBuffer *buffer, const guint8 *bytes, gsize n)
{
  gsize avail;

  if (n == 0)
    return TRUE;
  guint8 *space = stg_body_buffer_space (buffer, n, &avail);
  if (space == NULL)
    return FALSE;
  memcpy (space, bytes, n);
  stg_body_buffer_grew (buffer, n);
  return TRUE;
}

static void
give_back (StgBodyBuffer *buffer)
{
  if (buffer->budget != NULL)
    buffer->budget->used -= MIN (buffer->cap, buffer->budget->used);
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
