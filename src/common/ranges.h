/* ranges.h: sets of instance ids kept as sorted, merged closed ranges.
 *
 * StgRanges is how Stagger holds "instances 0-1,3,5-7": in update settings
 * (updateOnlyTheseInstances), in config groups, and on the command line.
 * Building is O(n log n) (appends, then one sort and merge on first read);
 * lookups are O(log n). Plain data, any thread, one owner.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The error domain of stg_ranges_parse: _INVALID for text that is not a
 * range list. */
#define STG_RANGES_ERROR (stg_ranges_error_quark ())
GQuark stg_ranges_error_quark (void);
typedef enum { STG_RANGES_ERROR_FAILED, STG_RANGES_ERROR_INVALID } StgRangesError;

typedef struct
{
  gint32 first;
  gint32 last;   /* included */
} StgRange;

typedef struct _StgRanges StgRanges;

/* A new, empty set; free it with stg_ranges_free (NULL is a no-op). */
StgRanges *stg_ranges_new (void);
void stg_ranges_free (StgRanges *ranges);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgRanges, stg_ranges_free)

/* Adds first..last (first <= last); overlaps and repeats are fine. */
void stg_ranges_add (StgRanges *ranges, gint32 first, gint32 last);
/* Adds the single id @id. */
void stg_ranges_add_one (StgRanges *ranges, gint32 id);

/* TRUE when @id lies in one of the ranges (O(log n)). */
gboolean stg_ranges_contains (StgRanges *ranges, gint32 id);
/* TRUE when the set covers no id. */
gboolean stg_ranges_is_empty (StgRanges *ranges);
/* Number of ids covered. */
gint64 stg_ranges_count (StgRanges *ranges);
/* How many merged ranges there are, and the @i-th of them (i < n), in
 * ascending order. */
guint stg_ranges_n (StgRanges *ranges);
StgRange stg_ranges_get (StgRanges *ranges, guint i);
/* TRUE when @a and @b cover the same ids. */
gboolean stg_ranges_equal (StgRanges *a, StgRanges *b);

/* Parses "0-1,3,5-7" (ids >= 0, first <= last). */
StgRanges *stg_ranges_parse (const gchar *text, GError **error);
/* Formats as "0-1,3,5-7" ("" when empty). */
gchar *stg_ranges_to_string (StgRanges *ranges);

G_END_DECLS
