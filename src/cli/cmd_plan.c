/* cmd_plan.c: stagger plan start|diff|status|list|wait|pause|resume|
 * abort|rollback|approve: rollout plans (several job updates in an order,
 * with gates). A plan is named by its id or, for the newest plan of that
 * name, by its name, after an optional "CLUSTER/". start and diff read a
 * plan file with its variables (--set NAME=VALUE); diff is a dry run.
 * status prints one line per plan in the manner of `kubectl get`, the
 * versions its jobs run now against those the plan moves them to, its
 * variables and conditions, then its stages with their readiness and the
 * instances not ready. One thread: the process's main thread.
 */
#include "config.h"

#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/jobfile.h"
#include "cli/output.h"
#include "common/thrift_json.h"
#include "cli/updates.h"
#include "common/enums.h"

#define FOLLOW_POLL_US (500 * 1000)

static const StgCliCommand *
self (const gchar *name)
{
  return stg_cli_find_command (stg_cli_plan_commands, name);
}

/* "[CLUSTER/]PLAN" into its parts. */
static gboolean
parse_plan (const gchar *text, gchar **cluster, gchar **plan, GError **error)
{
  const gchar *slash = strchr (text, '/');

  if (slash != NULL && strchr (slash + 1, '/') == NULL && slash > text && slash[1] != '\0')
    {
      *cluster = g_strndup (text, (gsize) (slash - text));
      *plan = g_strdup (slash + 1);
      if (stg_job_key_part_valid (*cluster))
        return TRUE;
      g_clear_pointer (cluster, g_free);
      g_clear_pointer (plan, g_free);
    }
  else if (slash == NULL && text[0] != '\0')
    {
      *cluster = NULL;
      *plan = g_strdup (text);
      return TRUE;
    }
  g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
               "bad '%s': expected a plan's id or name, or CLUSTER/PLAN", text);
  return FALSE;
}

/* The details of plan @ref: its id, else the newest plan named so. */
static ApiRolloutPlanDetails *
find_plan (StgCliClient *c, const gchar *ref, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (ApiResponse) r = stg_cli_get_rollout_plan_details (c, ref, &local);

  if (r != NULL)
    return g_object_ref (r->result->getRolloutPlanDetailsResult->details);
  if (!g_error_matches (local, STG_CLI_ERROR, STG_CLI_ERROR_FAILED))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  g_autoptr (ApiRolloutPlanQuery) q = g_object_new (API_TYPE_ROLLOUT_PLAN_QUERY, "name", ref,
                                                    "limit", 1, NULL);
  g_autoptr (ApiResponse) list = stg_cli_get_rollout_plans (c, q, error);
  if (list == NULL)
    return NULL;
  GPtrArray *plans = list->result->getRolloutPlansResult->plans;
  if (plans->len == 0)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_NOT_FOUND,
                   "no rollout plan has the id or the name '%s' (stagger plan list shows them)",
                   ref);
      return NULL;
    }
  ApiRolloutPlanSummary *s = plans->pdata[0];
  g_autoptr (ApiResponse) again = stg_cli_get_rollout_plan_details (c, s->id, error);
  return again ? g_object_ref (again->result->getRolloutPlanDetailsResult->details) : NULL;
}

/* The client and the details of the plan the argument names. */
static ApiRolloutPlanDetails *
open_plan (StgCli *cli, const gchar *arg, StgCliClient **client, GError **error)
{
  g_autofree gchar *cluster = NULL, *ref = NULL;

  if (!parse_plan (arg, &cluster, &ref, error))
    return NULL;
  *client = stg_cli_client_new (cli, cluster, error);
  return *client ? find_plan (*client, ref, error) : NULL;
}

/* ---- showing a plan --------------------------------------------------------------- */

static const gchar *
job_name (ApiJobKey *k)
{
  return k->name;
}

/* "v2", or "-" for none (not numbered yet). */
static gchar *
version_text (gint v)
{
  return v > 0 ? g_strdup_printf ("v%d", v) : g_strdup ("-");
}

/* "bookkeeper:v3 controller:v2" from each stage's @current version or
 * the one it moves its job to (0: "-"). */
static gchar *
versions (ApiRolloutPlanDetails *d, gboolean current)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < d->stages->len; i++)
    {
      ApiRolloutStageState *st = d->stages->pdata[i];
      g_autofree gchar *v = version_text (current ? st->currentVersion : st->targetVersion);
      g_string_append_printf (s, "%s%s:%s", s->len ? " " : "", job_name (st->job), v);
    }
  return g_string_free (s, FALSE);
}

static void
print_summary_line (StgCli *cli, ApiRolloutPlanDetails *d)
{
  ApiRolloutPlanSummary *s = d->summary;
  g_autofree gchar *since = stg_cli_format_duration (stg_cli_now_ms () - s->sinceMs);
  g_autofree gchar *current = versions (d, TRUE);
  g_autofree gchar *desired = versions (d, FALSE);
  g_autoptr (StgTable) t = stg_table_new ("NAME", "STATUS", "SINCE", "STAGES", "CURRENT", "DESIRED",
                                          NULL);
  stg_table_row (t);
  stg_table_cell (t, STG_STYLE_BOLD, "%s", s->name);
  stg_table_cell (t, stg_cli_rollout_status_style (s->status), "%s",
                  stg_rollout_status_name (s->status));
  stg_table_cell (t, STG_STYLE_PLAIN, "%s", since);
  stg_table_cell (t, STG_STYLE_PLAIN, "%d/%d", s->stagesDone, s->stageCount);
  stg_table_cell (t, STG_STYLE_PLAIN, "%s", current);
  stg_table_cell (t, STG_STYLE_PLAIN, "%s", desired);
  stg_table_print (t, cli);
}

/* The newest attempt of each stage's gates, as "gate: passed — message". */
static ApiRolloutGateResult *
last_gate (ApiRolloutPlanDetails *d, const gchar *stage)
{
  for (guint i = d->gateResults->len; i > 0; i--)
    {
      ApiRolloutGateResult *g = d->gateResults->pdata[i - 1];
      if (g_str_equal (g->stage, stage))
        return g;
    }
  return NULL;
}

/* "v1 -> v2", "v2 -> v1 (back)" while it goes back, "v1 (back from v2)"
 * once it went back, "v1 -> -" before its update when the version it
 * brings is not numbered yet, "v1" when nothing moves. */
static gchar *
stage_version (ApiRolloutStageState *st)
{
  gboolean back = st->status == API_ROLLOUT_STATUS_ROLLING_BACK ||
                  st->status == API_ROLLOUT_STATUS_ROLLED_BACK;
  g_autofree gchar *current = version_text (st->currentVersion);
  g_autofree gchar *target = version_text (st->targetVersion);

  if (back && st->status == API_ROLLOUT_STATUS_ROLLED_BACK && st->desiredVersion > 0)
    return g_strdup_printf ("%s (back from v%d)", current, st->desiredVersion);
  if ((st->targetVersion > 0 || !st->__isset_update) && st->targetVersion != st->currentVersion)
    return g_strdup_printf ("%s -> %s%s", current, target, back ? " (back)" : "");
  return g_steal_pointer (&current);
}

/* "version=0.10 zone=b", sorted; NULL when there are none. */
static gchar *
variables_text (ApiRolloutPlan *plan)
{
  if (plan == NULL || !plan->__isset_variables || plan->variables == NULL ||
      g_hash_table_size (plan->variables) == 0)
    return NULL;
  g_autoptr (GList) names = g_list_sort (g_hash_table_get_keys (plan->variables),
                                         (GCompareFunc) g_strcmp0);
  GString *s = g_string_new (NULL);
  for (GList *l = names; l != NULL; l = l->next)
    g_string_append_printf (s, "%s%s=%s", s->len ? " " : "", (const gchar *) l->data,
                            (const gchar *) g_hash_table_lookup (plan->variables, l->data));
  return g_string_free (s, FALSE);
}

/* The instances of each stage that are not ready, a few each. */
static void
print_unready (StgCli *cli, ApiRolloutPlanDetails *d)
{
  gboolean header = FALSE;

  for (guint i = 0; i < d->stages->len; i++)
    {
      ApiRolloutStageState *st = d->stages->pdata[i];
      for (guint k = 0; k < st->unready->len && k < 5; k++)
        {
          ApiUnreadyInstance *u = st->unready->pdata[k];
          if (!header)
            fputs ("\nnot ready:\n", cli->out);
          header = TRUE;
          fprintf (cli->out, "  %s: instance %d: %s\n", st->name, u->instanceId, u->reason);
        }
      if (st->unready->len > 5)
        fprintf (cli->out, "  %s: and %u more\n", st->name, st->unready->len - 5);
    }
}

/* "a,b", or "-" for none. */
static gchar *
joined (GPtrArray *names)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < names->len; i++)
    g_string_append_printf (s, "%s%s", i ? "," : "", (const gchar *) names->pdata[i]);
  if (s->len == 0)
    g_string_append (s, "-");
  return g_string_free (s, FALSE);
}

static void
print_details (StgCli *cli, StgCliClient *c, ApiRolloutPlanDetails *d)
{
  ApiRolloutPlanSummary *s = d->summary;
  gint64 now = stg_cli_now_ms ();

  g_autofree gchar *started = stg_cli_format_time (s->createdTimestampMs);

  print_summary_line (cli, d);
  fprintf (cli->out, "\nid:       %s\nstarted:  %s by %s\n", s->id, started,
           s->user[0] ? s->user : "(unknown)");
  if (s->reason[0] != '\0')
    fprintf (cli->out, "reason:   %s\n", s->reason);
  fprintf (cli->out, "on failure: %s\n",
           s->rollbackOnFailure ? "roll the finished stages back" : "leave them as they are");
  g_autofree gchar *vars = variables_text (d->plan);
  if (vars != NULL)
    fprintf (cli->out, "variables: %s\n", vars);
  stg_cli_print_conditions (cli, "conditions: ", d->conditions);
  g_autoptr (StgTable) t = stg_table_new ("STAGE", "STATUS", "SINCE", "JOB", "VERSION", "READY",
                                          "AFTER", "REASON", NULL);
  for (guint i = 0; i < d->stages->len; i++)
    {
      ApiRolloutStageState *st = d->stages->pdata[i];
      g_autofree gchar *since = stg_cli_format_duration (now - st->sinceMs);
      g_autofree gchar *job = stg_job_key_to_string (st->job);
      g_autofree gchar *deps = joined (st->dependsOn);
      stg_table_row (t);
      stg_table_cell (t, STG_STYLE_BOLD, "%s", st->name);
      stg_table_cell (t, stg_cli_rollout_status_style (st->status), "%s",
                      stg_rollout_status_name (st->status));
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", since);
      g_autofree gchar *version = stage_version (st);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", job);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", version);
      stg_table_cell (t,
                      st->readyInstances < st->desiredInstances ? STG_STYLE_WARN : STG_STYLE_PLAIN,
                      "%d/%d", st->readyInstances, st->desiredInstances);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", deps);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", st->reason[0] ? st->reason : "-");
    }
  fputc ('\n', cli->out);
  stg_table_print (t, cli);
  print_unready (cli, d);
  gboolean header = FALSE;
  for (guint i = 0; i < d->stages->len; i++)
    {
      ApiRolloutStageState *st = d->stages->pdata[i];
      ApiRolloutGateResult *g = last_gate (d, st->name);
      if (g == NULL && !st->__isset_update && !st->__isset_approvedBy)
        continue;
      if (!header)
        fputc ('\n', cli->out);
      header = TRUE;
      if (st->__isset_update)
        fprintf (cli->out, "%s: update %s (%s/#/update/%s/%s/%s/%s)\n", st->name, st->update->id,
                 stg_cli_client_target (c)->base_url, st->job->role, st->job->environment,
                 st->job->name, st->update->id);
      if (st->__isset_rollbackUpdate)
        fprintf (cli->out, "%s: taken back by update %s\n", st->name, st->rollbackUpdate->id);
      if (st->__isset_approvedBy)
        fprintf (cli->out, "%s: approved by %s\n", st->name, st->approvedBy);
      if (g != NULL)
        {
          const gchar *how = g->passed ? "passed" : "failed";
          fprintf (cli->out, "%s: gate '%s' (%s, attempt %d) %s — %s\n", st->name, g->gate,
                   g->phase, g->attempt, how, g->message);
        }
    }
}

/* ---- following a plan ----------------------------------------------------------- */

static int
terminal_code (gint status)
{
  switch (status)
    {
    case API_ROLLOUT_STATUS_DONE:
      return STG_EXIT_OK;
    case API_ROLLOUT_STATUS_ROLLED_BACK:
      return STG_EXIT_ROLLED_BACK;
    case API_ROLLOUT_STATUS_ABORTED:
      return STG_EXIT_ABORTED;
    default:
      return STG_EXIT_UPDATE_FAILED;
    }
}

static void
print_plan_event (StgCli *cli, ApiRolloutEvent *e)
{
  g_autofree gchar *what = e->__isset_stage
                               ? g_strdup_printf ("stage %s %s", e->stage,
                                                  stg_rollout_status_name (e->status))
                               : g_strdup_printf ("plan %s", stg_rollout_status_name (e->status));
  stg_cli_print_event (cli, e->timestampMs, what, stg_cli_rollout_status_style (e->status),
                       e->__isset_user && e->user && *e->user ? e->user : NULL,
                       e->__isset_message && e->message && *e->message ? e->message : NULL);
}

static void
print_gate_result (StgCli *cli, ApiRolloutGateResult *g)
{
  g_autofree gchar *what = g_strdup_printf ("stage %s gate '%s' %s", g->stage, g->gate,
                                            g->passed ? "passed" : "failed");
  g_autofree gchar *why = g_strdup_printf ("%s, attempt %d: %s", g->phase, g->attempt, g->message);
  stg_cli_print_event (cli, g->timestampMs, what, g->passed ? STG_STYLE_GOOD : STG_STYLE_BAD, NULL,
                       why);
}

/* Follows plan @id to its end, printing its events and gate attempts as
 * they come. Returns the exit code its end stands for. */
static int
follow (StgCli *cli, StgCliClient *c, const gchar *id)
{
  guint seen_events = 0, seen_gates = 0;

  for (;;)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (ApiResponse) r = stg_cli_get_rollout_plan_details (c, id, &error);
      if (r == NULL)
        return stg_cli_fail (cli, error);
      ApiRolloutPlanDetails *d = r->result->getRolloutPlanDetailsResult->details;
      /* Events and gate attempts in time order. */
      while (!cli->json && (seen_events < d->events->len || seen_gates < d->gateResults->len))
        {
          ApiRolloutEvent *e = seen_events < d->events->len ? d->events->pdata[seen_events] : NULL;
          ApiRolloutGateResult *g = seen_gates < d->gateResults->len
                                        ? d->gateResults->pdata[seen_gates]
                                        : NULL;
          if (g == NULL || (e != NULL && e->timestampMs < g->timestampMs))
            print_plan_event (cli, e), seen_events++;
          else
            print_gate_result (cli, g), seen_gates++;
        }
      fflush (cli->out);
      if (stg_rollout_status_is_terminal (d->summary->status))
        {
          if (cli->json)
            {
              g_autoptr (JsonNode) n = stg_thrift_to_json (d->summary);
              stg_cli_print_json (cli, n, FALSE);
            }
          return terminal_code (d->summary->status);
        }
      g_usleep (FOLLOW_POLL_US);
    }
}

/* ---- the commands ---------------------------------------------------------------- */

/* --set NAME=VALUE, each: name -> value; NULL with a usage error. */
static GHashTable *
parse_sets (gchar **sets, GError **error)
{
  g_autoptr (GHashTable) out = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  for (guint i = 0; sets != NULL && sets[i] != NULL; i++)
    {
      const gchar *eq = strchr (sets[i], '=');
      if (eq == NULL || eq == sets[i])
        {
          g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
                       "--set '%s': expected NAME=VALUE (a plan variable and its value)", sets[i]);
          return NULL;
        }
      g_hash_table_insert (out, g_strndup (sets[i], (gsize) (eq - sets[i])), g_strdup (eq + 1));
    }
  return g_steal_pointer (&out);
}

/* The plan file @path read with --set @sets. */
static StgPlanFile *
load_plan (const gchar *path, gchar **sets, GError **error)
{
  g_autoptr (GHashTable) set = parse_sets (sets, error);

  return set ? stg_plan_file_load (path, g_get_user_name (), set, error) : NULL;
}

#define SET_OPTION(sets) \
  { \
    "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &(sets), \
        "Give plan variable NAME this VALUE (over the plan file's default; repeatable)", \
        "NAME=VALUE" \
  }

static int
plan_start (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autofree gchar *message = NULL;
  g_auto (GStrv) sets = NULL;
  gboolean wait = FALSE;
  g_autoptr (GError) error = NULL;
  const GOptionEntry entries[] = {
    { "message", 'm', 0, G_OPTION_ARG_STRING, &message, "Why, recorded with the plan", "TEXT" },
    { "wait", 'w', 0, G_OPTION_ARG_NONE, &wait,
      "Follow the plan to its end (exit 0 DONE, 10 ROLLED_BACK, 11 ABORTED, 12 FAILED)", NULL },
    SET_OPTION (sets),
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("start"), "plan", entries,
                      "Starts the rollout plan in PLAN_FILE (stagger-plan(5)): its stages' job "
                      "updates in their order, each after its gates, rolled back in reverse "
                      "order when one fails.",
                      1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgPlanFile) pf = load_plan (argv[1], sets, &error);
  g_autoptr (StgCliClient) c = pf ? stg_cli_client_new (cli, pf->cluster, &error) : NULL;
  g_autoptr (ApiResponse) r = c ? stg_cli_start_rollout_plan (c, pf->plan, message, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  const gchar *id = r->result->startRolloutPlanResult->id;
  if (cli->json && !wait)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (r->result->startRolloutPlanResult);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  if (!cli->json)
    {
      g_autofree gchar *escaped = g_uri_escape_string (id, NULL, FALSE);
      fprintf (cli->out, "started rollout plan %s (%s) of %u stage%s\n", pf->plan->name, id,
               pf->plan->stages->len, pf->plan->stages->len == 1 ? "" : "s");
      fprintf (cli->out, "watch it at %s/#/plan/%s\n", stg_cli_client_target (c)->base_url,
               escaped);
    }
  return wait ? follow (cli, c, id) : STG_EXIT_OK;
}

/* One stage of a dry run. */
static void
print_stage_diff (StgCli *cli, ApiRolloutStageDiff *sd, ApiRolloutStage *stage)
{
  g_autofree gchar *job = stg_job_key_to_string (sd->job);
  g_autofree gchar *what = sd->changes ? g_strdup ("would change its job")
                                       : g_strdup ("would change nothing");
  g_autofree gchar *shown = stg_cli_styled (cli->color_out,
                                            sd->changes ? STG_STYLE_WARN : STG_STYLE_DIM, what);

  if (sd->currentVersion > 0)
    fprintf (cli->out, "stage %s (%s, now v%d): %s\n", sd->name, job, sd->currentVersion, shown);
  else
    fprintf (cli->out, "stage %s (%s, a new job): %s\n", sd->name, job, shown);
  if (!sd->changes)
    return;
  stg_cli_print_diff_groups (cli, sd->diff);
  stg_cli_print_config_changes (cli, stage->request->taskConfig, sd->diff, "  ");
  if (sd->diff->__isset_rehearsal && sd->diff->rehearsal != NULL)
    stg_cli_print_rehearsal (cli, sd->diff->rehearsal, "  ");
}

static int
plan_diff (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_auto (GStrv) sets = NULL;
  g_autoptr (GError) error = NULL;
  const GOptionEntry entries[] = {
    SET_OPTION (sets),
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("diff"), "plan", entries,
                      "A dry run of the rollout plan in PLAN_FILE: for each stage, whether its "
                      "update would change its job now and what it would change, instance range "
                      "by instance range and field by field, and the batches its update would "
                      "run with their predicted times. Starts nothing.",
                      1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgPlanFile) pf = load_plan (argv[1], sets, &error);
  g_autoptr (StgCliClient) c = pf ? stg_cli_client_new (cli, pf->cluster, &error) : NULL;
  g_autoptr (ApiResponse) r = c ? stg_cli_get_rollout_plan_diff (c, pf->plan, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  GPtrArray *stages = r->result->getRolloutPlanDiffResult->stages;
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (r->result->getRolloutPlanDiffResult);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  guint changing = 0;
  for (guint i = 0; i < stages->len; i++)
    changing += ((ApiRolloutStageDiff *) stages->pdata[i])->changes;
  g_autofree gchar *vars = variables_text (pf->plan);
  fprintf (cli->out, "rollout plan %s%s%s: %u of %u stage%s would change %s job\n", pf->plan->name,
           vars ? " with " : "", vars ? vars : "", changing, stages->len,
           stages->len == 1 ? "" : "s", changing == 1 ? "its" : "their");
  for (guint i = 0; i < stages->len; i++)
    {
      fputc ('\n', cli->out);
      print_stage_diff (cli, stages->pdata[i], pf->plan->stages->pdata[i]);
    }
  return STG_EXIT_OK;
}

static int
plan_status (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgCliClient) c = NULL;

  if (!stg_cli_parse (cli, self ("status"), "plan", NULL,
                      "Shows where a plan stands: its status, since when and why, the versions "
                      "its jobs run now against those it moves them to, and each stage.",
                      1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (ApiRolloutPlanDetails) d = open_plan (cli, argv[1], &c, &error);
  if (d == NULL)
    return stg_cli_fail (cli, error);
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (d);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  print_details (cli, c, d);
  return STG_EXIT_OK;
}

static int
plan_list (StgCli *cli, int argc, gchar **argv)
{
  int code;
  gboolean active = FALSE;
  gint limit = 50;
  g_autofree gchar *name = NULL;
  g_autoptr (GError) error = NULL;
  const GOptionEntry entries[] = {
    { "active", 0, 0, G_OPTION_ARG_NONE, &active, "Only plans that have not ended", NULL },
    { "name", 0, 0, G_OPTION_ARG_STRING, &name, "Only plans with this name", "NAME" },
    { "limit", 0, 0, G_OPTION_ARG_INT, &limit, "At most this many (default 50)", "N" },
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("list"), "plan", entries, "Lists rollout plans, newest first.", 0,
                      1, &argc, &argv, &code))
    return code;
  if (limit < 1 || limit > 1000)
    return stg_cli_usage_error (cli, "--limit must be between 1 and 1000");
  const gchar *cluster = argc > 1 ? argv[1] : NULL;
  if (cluster != NULL && !stg_job_key_part_valid (cluster))
    return stg_cli_usage_error (cli, "bad cluster name '%s'", cluster);
  g_autoptr (ApiRolloutPlanQuery) q = g_object_new (API_TYPE_ROLLOUT_PLAN_QUERY, "limit", limit,
                                                    NULL);
  if (active)
    g_object_set (q, "activeOnly", TRUE, NULL);
  if (name != NULL)
    g_object_set (q, "name", name, NULL);
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, cluster, &error);
  g_autoptr (ApiResponse) r = c ? stg_cli_get_rollout_plans (c, q, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (r->result->getRolloutPlansResult);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  GPtrArray *plans = r->result->getRolloutPlansResult->plans;
  gint64 now = stg_cli_now_ms ();
  g_autoptr (StgTable) t = stg_table_new ("ID", "NAME", "STATUS", "SINCE", "STAGES", "USER",
                                          "STARTED", NULL);
  for (guint i = 0; i < plans->len; i++)
    {
      ApiRolloutPlanSummary *s = plans->pdata[i];
      g_autofree gchar *since = stg_cli_format_duration (now - s->sinceMs);
      g_autofree gchar *started = stg_cli_format_time (s->createdTimestampMs);
      stg_table_row (t);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", s->id);
      stg_table_cell (t, STG_STYLE_BOLD, "%s", s->name);
      stg_table_cell (t, stg_cli_rollout_status_style (s->status), "%s",
                      stg_rollout_status_name (s->status));
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", since);
      stg_table_cell (t, STG_STYLE_PLAIN, "%d/%d", s->stagesDone, s->stageCount);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", s->user[0] ? s->user : "-");
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", started);
    }
  if (stg_table_rows (t) == 0)
    fputs ("no rollout plans\n", cli->out);
  else
    stg_table_print (t, cli);
  return STG_EXIT_OK;
}

static int
plan_wait (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgCliClient) c = NULL;

  if (!stg_cli_parse (cli, self ("wait"), "plan", NULL,
                      "Follows the plan to its end. Exit 0 for DONE, 10 ROLLED_BACK, 11 ABORTED, "
                      "12 FAILED.",
                      1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (ApiRolloutPlanDetails) d = open_plan (cli, argv[1], &c, &error);
  if (d == NULL)
    return stg_cli_fail (cli, error);
  return follow (cli, c, d->summary->id);
}

static int
control (StgCli *cli, int argc, gchar **argv, const gchar *name, StgCliUpdateAction action,
         const gchar *description, const gchar *done)
{
  int code;
  g_autofree gchar *message = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgCliClient) c = NULL;
  const GOptionEntry entries[] = {
    { "message", 'm', 0, G_OPTION_ARG_STRING, &message, "Why, recorded with the plan", "TEXT" },
    { NULL },
  };

  if (!stg_cli_parse (cli, self (name), "plan", entries, description, 1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (ApiRolloutPlanDetails) d = open_plan (cli, argv[1], &c, &error);
  g_autoptr (ApiResponse) r = d ? stg_cli_control_rollout_plan (c, action, d->summary->id, message,
                                                                &error)
                                : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  if (!cli->json)
    fprintf (cli->out, "rollout plan %s (%s) %s\n", d->summary->name, d->summary->id, done);
  return STG_EXIT_OK;
}

static int
plan_pause (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "pause", STG_CLI_UPDATE_PAUSE,
                  "Pauses a plan: no stage starts, its stages' updates pause, no gate is tried.",
                  "is paused");
}

static int
plan_resume (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "resume", STG_CLI_UPDATE_RESUME,
                  "Resumes a paused plan and its stages' updates.", "goes on");
}

static int
plan_abort (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "abort", STG_CLI_UPDATE_ABORT,
                  "Stops a plan for good: its stages' updates are aborted and nothing is rolled "
                  "back.",
                  "is aborted");
}

static int
plan_rollback (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "rollback", STG_CLI_UPDATE_ROLLBACK,
                  "Rolls a plan back: its stages' running updates roll back, then every stage "
                  "that changed its job goes back to the job's configuration from before the "
                  "plan, in reverse dependency order. Also after the plan ended.",
                  "is rolling back");
}

static int
plan_approve (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autofree gchar *message = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgCliClient) c = NULL;
  const GOptionEntry entries[] = {
    { "message", 'm', 0, G_OPTION_ARG_STRING, &message, "Recorded with the approval", "TEXT" },
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("approve"), "plan", entries,
                      "Approves a stage that waits for an approval (require_approval), or, "
                      "without STAGE, every stage that waits for one now. Who approved is "
                      "recorded.",
                      1, 2, &argc, &argv, &code))
    return code;
  const gchar *stage = argc > 2 ? argv[2] : NULL;
  g_autoptr (ApiRolloutPlanDetails) d = open_plan (cli, argv[1], &c, &error);
  g_autoptr (ApiResponse) r = d ? stg_cli_approve_rollout_stage (c, d->summary->id, stage, message,
                                                                 &error)
                                : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  if (!cli->json)
    fprintf (cli->out, "approved %s%s of rollout plan %s (%s)\n", stage ? "stage " : "",
             stage ? stage : "the stages awaiting approval", d->summary->name, d->summary->id);
  return STG_EXIT_OK;
}

const StgCliCommand stg_cli_plan_commands[] = {
  { "start", "PLAN_FILE", "Start a rollout plan (several job updates in order)", plan_start },
  { "diff", "PLAN_FILE", "Show what each stage of a plan would change (a dry run)", plan_diff },
  { "status", "[CLUSTER/]PLAN", "Show a plan: its status, versions and stages", plan_status },
  { "list", "[CLUSTER]", "List rollout plans, newest first", plan_list },
  { "wait", "[CLUSTER/]PLAN", "Follow a plan to its end", plan_wait },
  { "pause", "[CLUSTER/]PLAN", "Pause a plan and its stages' updates", plan_pause },
  { "resume", "[CLUSTER/]PLAN", "Resume a paused plan", plan_resume },
  { "abort", "[CLUSTER/]PLAN", "Stop a plan; nothing is rolled back", plan_abort },
  { "rollback", "[CLUSTER/]PLAN", "Roll back every stage that changed its job", plan_rollback },
  { "approve", "[CLUSTER/]PLAN [STAGE]", "Let a stage that awaits approval go on", plan_approve },
  { NULL, NULL, NULL, NULL },
};
