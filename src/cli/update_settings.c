/* update_settings.c: an update's settings as update info prints them:
 * every setting the update runs with, a line for each group of them, a
 * percent as the percent given and a default in words. One thread: the
 * process's main thread.
 */
#include "config.h"

#include "cli/output.h"
#include "cli/updates.h"

#define PERCENT_OF_TOUCHED "%g%% of the instances touched"

/* "; pause after each batch" when the strategy says so. */
static const gchar *
autopause (gboolean yes)
{
  return yes ? "; pause after each batch" : "";
}

/* "queue of 2", "batches of 2" or "batches of 1, 2, 5 (the last
 * repeated)", then how batches grow and whether they pause. */
static gchar *
strategy_line (const ApiJobUpdateSettings *st)
{
  const ApiJobUpdateStrategy *u = st->__isset_updateStrategy ? st->updateStrategy : NULL;
  GString *s = g_string_new (NULL);
  gboolean pause = FALSE;

  if (u != NULL && u->__isset_queueStrategy && u->queueStrategy != NULL)
    g_string_append_printf (s, "queue of %d", u->queueStrategy->groupSize);
  else if (u != NULL && u->__isset_batchStrategy && u->batchStrategy != NULL)
    {
      g_string_append_printf (s, "batches of %d", u->batchStrategy->groupSize);
      pause = u->batchStrategy->autopauseAfterBatch;
    }
  else if (u != NULL && u->__isset_varBatchStrategy && u->varBatchStrategy != NULL)
    {
      GArray *sizes = u->varBatchStrategy->groupSizes;
      g_string_append (s, "batches of ");
      for (guint i = 0; sizes != NULL && i < sizes->len; i++)
        g_string_append_printf (s, "%s%d", i ? ", " : "", g_array_index (sizes, gint32, i));
      if (sizes != NULL && sizes->len > 1)
        g_string_append (s, " (the last repeated)");
      pause = u->varBatchStrategy->autopauseAfterBatch;
    }
  else
    g_string_append_printf (s, "%s of %d", st->waitForBatchCompletion ? "batches" : "queue",
                            MAX (st->updateGroupSize, 1));

  gdouble growth = st->__isset_growthFactor ? st->growthFactor : 1.0;
  gint32 cap = st->__isset_maxBatchSize ? st->maxBatchSize : 0;
  if (growth > 1.0)
    g_string_append_printf (s, ", each batch %gx the one before", growth);
  if (cap > 0)
    g_string_append_printf (s, growth > 1.0 ? ", up to %d" : ", largest batch %d", cap);
  g_string_append (s, autopause (pause));
  return g_string_free (s, FALSE);
}

/* The watch, and how long an instance has to become healthy. */
static gchar *
watch_line (const ApiJobUpdateSettings *st)
{
  g_autofree gchar *watch = stg_cli_format_duration (st->minWaitInInstanceRunningMs);
  gint64 start = st->__isset_maxInstanceStartMs ? st->maxInstanceStartMs : 0;
  g_autofree gchar *limit = stg_cli_format_duration (start);

  if (start <= 0)
    return g_strdup_printf ("%s; no limit on how long an instance takes to become healthy", watch);
  return g_strdup_printf ("%s; an instance not healthy within %s fails", watch, limit);
}

/* Failures allowed per instance and failed instances allowed, each a
 * count or a percent, and what a failed update does. */
static gchar *
failures_line (const ApiJobUpdateSettings *st)
{
  g_autofree gchar *each = NULL, *total = NULL;

  if (st->__isset_maxPerInstanceFailuresPercent)
    each = g_strdup_printf ("allowed per instance: " PERCENT_OF_TOUCHED,
                            st->maxPerInstanceFailuresPercent);
  else
    each = g_strdup_printf ("%d allowed per instance", st->maxPerInstanceFailures);
  if (st->__isset_maxFailedInstancesPercent)
    total = g_strdup_printf (PERCENT_OF_TOUCHED " may fail", st->maxFailedInstancesPercent);
  else if (st->maxFailedInstances == 0)
    total = g_strdup ("no instance may fail");
  else
    total = g_strdup_printf ("%d instance%s may fail", st->maxFailedInstances,
                             st->maxFailedInstances == 1 ? "" : "s");
  return g_strdup_printf ("%s; %s; %s", each, total,
                          st->rollbackOnFailure ? "roll back on failure" : "no rollback");
}

/* The floor of instances in service and the surge. */
static gchar *
service_line (const ApiJobUpdateSettings *st)
{
  g_autofree gchar *floor = NULL, *surge = NULL;
  gint32 min = st->__isset_minInService ? st->minInService : 0;

  floor = min > 0 ? g_strdup_printf ("at least %d in service", min)
                  : g_strdup ("no minimum in service");
  if (st->__isset_maxSurgePercent && st->maxSurgePercent > 0)
    surge = g_strdup_printf ("surge of " PERCENT_OF_TOUCHED, st->maxSurgePercent);
  else if (st->__isset_maxSurge && st->maxSurge > 0)
    surge = g_strdup_printf ("surge of %d instance%s", st->maxSurge, st->maxSurge == 1 ? "" : "s");
  else
    surge = g_strdup ("no surge");
  return g_strdup_printf ("%s; %s", floor, surge);
}

/* The pause between batches, the deadline and the pulses. */
static gchar *
pacing_line (const ApiJobUpdateSettings *st)
{
  gint64 pause = st->__isset_pauseBetweenBatchesMs ? st->pauseBetweenBatchesMs : 0;
  gint64 deadline = st->__isset_updateDeadlineMs ? st->updateDeadlineMs : 0;
  gint64 pulse = st->__isset_blockIfNoPulsesAfterMs ? st->blockIfNoPulsesAfterMs : 0;
  g_autofree gchar *p = stg_cli_format_duration (pause);
  g_autofree gchar *d = stg_cli_format_duration (deadline);
  g_autofree gchar *c = stg_cli_format_duration (pulse);
  g_autofree gchar *a = pause > 0 ? g_strdup_printf ("%s between batches", p)
                                  : g_strdup ("no pause between batches");
  g_autofree gchar *b = deadline > 0 ? g_strdup_printf ("deadline %s", d)
                                     : g_strdup ("no deadline");
  g_autofree gchar *e = pulse > 0 ? g_strdup_printf ("coordinated: a pulse at least every %s", c)
                                  : g_strdup ("not coordinated");

  return g_strdup_printf ("%s; %s; %s", a, b, e);
}

/* The gates' names, "a, b". */
static void
append_gates (GString *s, const gchar *what, gboolean isset, GPtrArray *gates)
{
  if (!isset || gates == NULL || gates->len == 0)
    return;
  g_string_append_printf (s, "%s%s: ", s->len ? "; " : "", what);
  for (guint i = 0; i < gates->len; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", ((ApiRolloutGate *) gates->pdata[i])->name);
}

/* The instances it may touch and whether it restarts them, then its
 * gates; NULL for each when there is nothing to say. */
static void
scope_lines (const ApiJobUpdateSettings *st, gchar **scope, gchar **gates)
{
  GString *s = g_string_new (NULL), *g = g_string_new (NULL);

  if (st->__isset_updateOnlyTheseInstances && st->updateOnlyTheseInstances != NULL &&
      g_hash_table_size (st->updateOnlyTheseInstances) > 0)
    {
      g_autoptr (StgRanges) only = stg_cli_ranges_from_set (st->updateOnlyTheseInstances);
      g_autofree gchar *text = stg_ranges_to_string (only);
      g_string_append_printf (s, "only instances %s", text);
    }
  if (st->__isset_restartInstances && st->restartInstances)
    g_string_append_printf (s, "%srestarts the instances that already run its config",
                            s->len ? "; " : "");
  append_gates (g, "between batches", st->__isset_batchGates, st->batchGates);
  append_gates (g, "before each instance", st->__isset_instanceGatesBefore,
                st->instanceGatesBefore);
  append_gates (g, "after each instance", st->__isset_instanceGatesAfter, st->instanceGatesAfter);
  *scope = g_string_free (s, s->len == 0);
  *gates = g_string_free (g, g->len == 0);
}

void
stg_cli_print_update_settings (StgCli *cli, const ApiJobUpdateSettings *st)
{
  g_autofree gchar *strategy = strategy_line (st), *watch = watch_line (st);
  g_autofree gchar *failures = failures_line (st), *service = service_line (st);
  g_autofree gchar *pacing = pacing_line (st), *scope = NULL, *gates = NULL;
  gboolean sla = st->__isset_slaAware && st->slaAware;

  scope_lines (st, &scope, &gates);
  fprintf (cli->out, "strategy:  %s\n", strategy);
  fprintf (cli->out, "watch:     %s\n", watch);
  fprintf (cli->out, "failures:  %s\n", failures);
  fprintf (cli->out, "service:   %s\n", service);
  fprintf (cli->out, "pacing:    %s\n", pacing);
  fprintf (cli->out, "SLA:       %s\n",
           sla ? "SLA-aware: an instance goes down only when the job's SLA allows it"
               : "not SLA-aware");
  if (scope != NULL)
    fprintf (cli->out, "scope:     %s\n", scope);
  if (gates != NULL)
    fprintf (cli->out, "gates:     %s\n", gates);
}
