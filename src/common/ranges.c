/* ranges.c: StgRanges, sorted merged instance-id ranges.
 *
 * Invariant once normalized: ranges ascend, none overlap or touch
 * (r[i].last + 1 < r[i+1].first). Additions append and clear `sorted`; every
 * reader normalizes first. Plain data, any thread, one owner.
 */
#include "config.h"

#include <stdlib.h>
#include <errno.h>

#include "common/ranges.h"

G_DEFINE_QUARK (stg-ranges-error-quark, stg_ranges_error)

struct _StgRanges
{
  GArray *items;     /* StgRange */
  gboolean sorted;   /* normalized: sorted and merged */
};

StgRanges *
stg_ranges_new (void)
{
  StgRanges *r = g_new0 (StgRanges, 1);
  r->items = g_array_new (FALSE, FALSE, sizeof (StgRange));
  r->sorted = TRUE;
  return r;
}

void
stg_ranges_free (StgRanges *ranges)
{
  if (ranges == NULL)
    return;
  g_array_unref (ranges->items);
  g_free (ranges);
}

static gint
compare_range (gconstpointer a, gconstpointer b)
{
  const StgRange *x = a;
  const StgRange *y = b;
  return (x->first > y->first) - (x->first < y->first);
}

static void
normalize (StgRanges *r)
{
  if (r->sorted)
    return;
  g_array_sort (r->items, compare_range);
  guint out = 0;
  for (guint i = 0; i < r->items->len; i++)
    {
      StgRange cur = g_array_index (r->items, StgRange, i);
      if (out > 0)
        {
          StgRange *prev = &g_array_index (r->items, StgRange, out - 1);
          if ((gint64) cur.first <= (gint64) prev->last + 1)
            {
              prev->last = MAX (prev->last, cur.last);
              continue;
            }
        }
      g_array_index (r->items, StgRange, out++) = cur;
    }
  g_array_set_size (r->items, out);
  r->sorted = TRUE;
}

void
stg_ranges_add (StgRanges *ranges, gint32 first, gint32 last)
{
  g_return_if_fail (first <= last);

  if (ranges->items->len > 0)
    {
      StgRange *tail = &g_array_index (ranges->items, StgRange, ranges->items->len - 1);
      /* Ascending adds (the common case) extend the tail in place. */
      if (ranges->sorted && first >= tail->first && (gint64) first <= (gint64) tail->last + 1)
        {
          tail->last = MAX (tail->last, last);
          return;
        }
      if (first <= tail->last + (gint64) 1)
        ranges->sorted = FALSE;
    }
  StgRange r = { first, last };
  g_array_append_val (ranges->items, r);
}

void
stg_ranges_add_one (StgRanges *ranges, gint32 id)
{
  stg_ranges_add (ranges, id, id);
}

gboolean
stg_ranges_contains (StgRanges *ranges, gint32 id)
{
  normalize (ranges);
  guint lo = 0, hi = ranges->items->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      StgRange r = g_array_index (ranges->items, StgRange, mid);
      if (id < r.first)
        hi = mid;
      else if (id > r.last)
        lo = mid + 1;
      else
        return TRUE;
    }
  return FALSE;
}

gboolean
stg_ranges_is_empty (StgRanges *ranges)
{
  return ranges->items->len == 0;
}

gint64
stg_ranges_count (StgRanges *ranges)
{
  gint64 n = 0;

  normalize (ranges);
  for (guint i = 0; i < ranges->items->len; i++)
    {
      StgRange r = g_array_index (ranges->items, StgRange, i);
      n += (gint64) r.last - r.first + 1;
    }
  return n;
}

guint
stg_ranges_n (StgRanges *ranges)
{
  normalize (ranges);
  return ranges->items->len;
}

StgRange
stg_ranges_get (StgRanges *ranges, guint i)
{
  normalize (ranges);
  if (i >= ranges->items->len)
    {
      StgRange none = { 0, -1 };
      g_return_val_if_reached (none);
    }
  return g_array_index (ranges->items, StgRange, i);
}

gboolean
stg_ranges_equal (StgRanges *a, StgRanges *b)
{
  normalize (a);
  normalize (b);
  if (a->items->len != b->items->len)
    return FALSE;
  for (guint i = 0; i < a->items->len; i++)
    {
      StgRange x = g_array_index (a->items, StgRange, i);
      StgRange y = g_array_index (b->items, StgRange, i);
      if (x.first != y.first || x.last != y.last)
        return FALSE;
    }
  return TRUE;
}

static gboolean
parse_id (const gchar *text, const gchar *whole, gint32 *out, GError **error)
{
  gchar *end = NULL;
  gint64 v;

  if (!g_ascii_isdigit (text[0]))
    goto bad;
  errno = 0;
  v = g_ascii_strtoll (text, &end, 10);
  if (errno != 0 || *end != '\0' || v < 0 || v > G_MAXINT32)
    goto bad;
  *out = (gint32) v;
  return TRUE;

bad:
  g_set_error (error, STG_RANGES_ERROR, STG_RANGES_ERROR_INVALID,
               "bad instance list '%s': '%s' is not an instance id", whole, text);
  return FALSE;
}

StgRanges *
stg_ranges_parse (const gchar *text, GError **error)
{
  g_autoptr (StgRanges) ranges = stg_ranges_new ();
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);

  if (text[0] == '\0')
    {
      g_set_error (error, STG_RANGES_ERROR, STG_RANGES_ERROR_INVALID,
                   "empty instance list");
      return NULL;
    }
  for (guint i = 0; parts[i] != NULL; i++)
    {
      g_auto (GStrv) ends = g_strsplit (parts[i], "-", 3);
      gint32 first, last;
      if (ends[0] == NULL || !parse_id (ends[0], text, &first, error))
        {
          if (ends[0] == NULL)
            g_set_error (error, STG_RANGES_ERROR, STG_RANGES_ERROR_INVALID,
                         "bad instance list '%s': empty item", text);
          return NULL;
        }
      last = first;
      if (ends[1] != NULL)
        {
          if (ends[2] != NULL || !parse_id (ends[1], text, &last, error))
            {
              if (ends[2] != NULL)
                g_set_error (error, STG_RANGES_ERROR, STG_RANGES_ERROR_INVALID,
                             "bad instance list '%s': '%s' is not a range", text, parts[i]);
              return NULL;
            }
          if (last < first)
            {
              g_set_error (error, STG_RANGES_ERROR, STG_RANGES_ERROR_INVALID,
                           "bad instance list '%s': range '%s' runs backwards", text, parts[i]);
              return NULL;
            }
        }
      stg_ranges_add (ranges, first, last);
    }
  return g_steal_pointer (&ranges);
}

gchar *
stg_ranges_to_string (StgRanges *ranges)
{
  GString *s = g_string_new (NULL);

  normalize (ranges);
  for (guint i = 0; i < ranges->items->len; i++)
    {
      StgRange r = g_array_index (ranges->items, StgRange, i);
      if (i > 0)
        g_string_append_c (s, ',');
      if (r.first == r.last)
        g_string_append_printf (s, "%d", r.first);
      else
        g_string_append_printf (s, "%d-%d", r.first, r.last);
    }
  return g_string_free (s, FALSE);
}
