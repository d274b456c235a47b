/* diff.c: what an update changes, instance by instance.
 *
 * For each instance in scope (the union of the instances the job has and
 * 0..instanceCount-1, limited to updateOnlyTheseInstances when set):
 * add (absent now, wanted), kill (present, id >= instanceCount), replace
 * (present, another config), unchanged (same config). Instances the job has
 * outside that scope are listed apart (outside), with their current config:
 * the update leaves them as they are (Aurora's JobDiff.compute reports them
 * as unchanged). A rolling restart (restartInstances) makes the instances in
 * scope that keep their config changes as well: restarts (from == to).
 * Configs compare by id: the store keeps each canonical encoding once, so
 * equal configs have equal ids. Main-loop thread only.
 */
#include "config.h"

#include "engine/engine_private.h"
#include "engine/settings_private.h"

void
stg_diff_clear (StgDiff *diff)
{
  g_clear_pointer (&diff->changes, g_array_unref);
  g_clear_pointer (&diff->unchanged, g_array_unref);
  g_clear_pointer (&diff->outside, g_array_unref);
}

gboolean
stg_diff_compute (StgEngine *engine, gint64 job_id, gint64 desired_config, gint32 instance_count,
                  StgRanges *only, gboolean restart, StgDiff *diff, GError **error)
{
  g_autoptr (GArray) rows = NULL;

  diff->changes = g_array_new (FALSE, FALSE, sizeof (StgChange));
  diff->unchanged = g_array_new (FALSE, FALSE, sizeof (StgChange));
  diff->outside = g_array_new (FALSE, FALSE, sizeof (StgChange));
  diff->current_count = 0;

  if (job_id > 0)
    {
      rows = stg_store_list_instances (engine->store, job_id, error);
      if (rows == NULL)
        {
          stg_engine_wrap_error (error);
          return FALSE;
        }
      diff->current_count = rows->len;
    }

  /* Walk the existing rows (ascending) and 0..count-1 together. */
  guint r = 0;
  gint32 next_wanted = 0;
  for (;;)
    {
      const StgInstanceRow *row = rows != NULL && r < rows->len
                                    ? &g_array_index (rows, StgInstanceRow, r) : NULL;
      gint32 id;
      gint64 current = 0;

      if (row != NULL && (next_wanted >= instance_count || row->instance_id <= next_wanted))
        {
          id = row->instance_id;
          current = row->config_id;
          r++;
          if (id == next_wanted)
            next_wanted++;
        }
      else if (next_wanted < instance_count)
        id = next_wanted++;
      else
        break;

      if (only != NULL && !stg_ranges_contains (only, id))
        {
          /* Out of scope: an instance the job has stays as it is. */
          StgChange keep = { id, current, current };
          if (current != 0)
            g_array_append_val (diff->outside, keep);
          continue;
        }
      StgChange c = { id, current, id < instance_count ? desired_config : 0 };
      if (c.from_config == c.to_config && !(restart && c.from_config != 0))
        g_array_append_val (diff->unchanged, c);
      else
        g_array_append_val (diff->changes, c);
    }
  return TRUE;
}
