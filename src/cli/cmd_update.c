/* cmd_update.c: stagger update start|info|pause|resume|abort|rollback|pulse|
 * list|wait. An update is named by its job (the newest update of it, or the
 * active one for the controls) or by --id. One thread: the process's main
 * thread.
 */
#include "config.h"

#include <unistd.h>

#include "cli/cli.h"
#include "cli/updates.h"
#include "cli/client.h"
#include "cli/jobfile.h"
#include "common/enums.h"
#include "cli/output.h"
#include "common/thrift_json.h"

static const StgCliCommand *
self (const gchar *name)
{
  return stg_cli_find_command (stg_cli_update_commands, name);
}

static ApiJobUpdateDetails *
details (StgCliClient *c, ApiJobUpdateKey *key, GError **error)
{
  g_autoptr (ApiResponse) r = stg_cli_get_job_update_details (c, key, error);
  if (r == NULL)
    return NULL;
  GPtrArray *list = r->result->getJobUpdateDetailsResult->detailsList;
  if (list == NULL || list->len == 0)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_NOT_FOUND, "no update %s", key->id);
      return NULL;
    }
  return g_object_ref (list->pdata[0]);
}

/* Instances the update touches, and how many of them are done. */
static void
progress (ApiJobUpdateDetails *d, gint *done, gint *total)
{
  g_autoptr (StgRanges) all = stg_ranges_new ();
  g_autoptr (GHashTable) last = g_hash_table_new (NULL, NULL);
  ApiJobUpdateInstructions *in = d->update->instructions;
  gboolean back = FALSE;
  gint status = d->update->summary->state->status;

  if (in->desiredState != NULL)
    {
      g_autoptr (StgRanges) r = stg_cli_ranges_from_set (in->desiredState->instances);
      for (guint i = 0; i < stg_ranges_n (r); i++)
        stg_ranges_add (all, stg_ranges_get (r, i).first, stg_ranges_get (r, i).last);
    }
  for (guint i = 0; i < d->instanceEvents->len; i++)
    {
      ApiJobInstanceUpdateEvent *e = d->instanceEvents->pdata[i];
      stg_ranges_add_one (all, e->instanceId);
      g_hash_table_insert (last, GINT_TO_POINTER (e->instanceId + 1), GINT_TO_POINTER (e->action));
    }
  back = status == API_JOB_UPDATE_STATUS_ROLLING_BACK || status == API_JOB_UPDATE_STATUS_ROLL_BACK_PAUSED ||
         status == API_JOB_UPDATE_STATUS_ROLLED_BACK || status == API_JOB_UPDATE_STATUS_ROLL_BACK_AWAITING_PULSE;
  *done = 0;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, last);
  while (g_hash_table_iter_next (&it, &k, &v))
    if (GPOINTER_TO_INT (v) == (back ? API_JOB_UPDATE_ACTION_INSTANCE_ROLLED_BACK
                                     : API_JOB_UPDATE_ACTION_INSTANCE_UPDATED))
      (*done)++;
  *total = (gint) stg_ranges_count (all);
}

static void
print_update_event (StgCli *cli, ApiJobUpdateEvent *e)
{
  stg_cli_print_event (cli, e->timestampMs, stg_update_status_name (e->status),
                       stg_cli_update_status_style (e->status),
                       e->__isset_user && e->user && *e->user ? e->user : NULL,
                       e->__isset_message && e->message && *e->message ? e->message : NULL);
}

static void
print_instance_event (StgCli *cli, ApiJobInstanceUpdateEvent *e)
{
  g_autofree gchar *what = g_strdup_printf ("instance %d %s", e->instanceId,
                                            stg_update_action_name (e->action));
  stg_cli_print_event (cli, e->timestampMs, what, stg_cli_update_action_style (e->action), NULL,
                       e->__isset_message && e->message && *e->message ? e->message : NULL);
}

static void
print_details (StgCli *cli, ApiJobUpdateDetails *d)
{
  ApiJobUpdateSummary *s = d->update->summary;
  ApiJobUpdateSettings *st = d->update->instructions->settings;
  g_autofree gchar *job = stg_job_key_to_string (s->key->job);
  g_autofree gchar *created = stg_cli_format_time (s->state->createdTimestampMs);
  g_autofree gchar *status = stg_cli_styled (cli->color_out, stg_cli_update_status_style (s->state->status),
                                             stg_update_status_name (s->state->status));
  gint done, total;

  progress (d, &done, &total);
  fprintf (cli->out, "update %s of %s\n", s->key->id, job);
  fprintf (cli->out, "status:    %s\n", status);
  fprintf (cli->out, "started:   %s by %s\n", created, s->user && *s->user ? s->user : "-");
  fprintf (cli->out, "progress:  %d of %d instances\n", done, total);
  stg_cli_print_conditions (cli, "conditions: ", d->conditions);
  if (st != NULL)
    stg_cli_print_update_settings (cli, st);

  /* The latest event of each instance, by instance id, and the latest
   * cause each one was given (why it failed, when it did). */
  g_autoptr (GHashTable) last = g_hash_table_new (NULL, NULL);
  g_autoptr (GHashTable) cause = g_hash_table_new (NULL, NULL);
  gint max_id = -1;
  for (guint i = 0; i < d->instanceEvents->len; i++)
    {
      ApiJobInstanceUpdateEvent *e = d->instanceEvents->pdata[i];
      g_hash_table_insert (last, GINT_TO_POINTER (e->instanceId + 1), e);
      if (e->__isset_message && e->message != NULL && e->message[0] != '\0')
        g_hash_table_insert (cause, GINT_TO_POINTER (e->instanceId + 1), e->message);
      max_id = MAX (max_id, e->instanceId);
    }
  if (max_id >= 0)
    {
      g_autoptr (StgTable) t = stg_table_new ("INSTANCE", "STATE", "CAUSE", NULL);
      for (gint id = 0; id <= max_id; id++)
        {
          ApiJobInstanceUpdateEvent *e = g_hash_table_lookup (last, GINT_TO_POINTER (id + 1));
          const gchar *why = g_hash_table_lookup (cause, GINT_TO_POINTER (id + 1));
          if (e == NULL)
            continue;
          stg_table_row (t);
          stg_table_cell (t, STG_STYLE_PLAIN, "%d", id);
          stg_table_cell (t, stg_cli_update_action_style (e->action), "%s",
                          stg_update_action_name (e->action));
          stg_table_cell (t, why ? STG_STYLE_WARN : STG_STYLE_DIM, "%s", why ? why : "-");
        }
      fputc ('\n', cli->out);
      stg_table_print (t, cli);
    }
  fprintf (cli->out, "\nevents:\n");
  for (guint i = 0; i < d->updateEvents->len; i++)
    print_update_event (cli, d->updateEvents->pdata[i]);
}

static int
update_info (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autofree gchar *id = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;
  const GOptionEntry entries[] = {
    { "id", 0, 0, G_OPTION_ARG_STRING, &id, "This update (default: the job's newest)", "ID" },
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("info"), "update", entries,
                      "Shows an update: status, who started it, settings, progress, each "
                      "instance's latest action with its last cause, and the events.", 1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = stg_cli_client_for_job (cli, argv[1], FALSE, &path, &error);
  g_autoptr (ApiJobUpdateKey) key = c ? stg_cli_find_update (c, path->key, id, FALSE, &error)
                                      : NULL;
  g_autoptr (ApiJobUpdateDetails) d = key ? details (c, key, &error) : NULL;
  if (d == NULL)
    return stg_cli_fail (cli, error);
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (d);
      stg_cli_print_json (cli, n, FALSE);
    }
  else
    print_details (cli, d);
  return STG_EXIT_OK;
}

int
stg_cli_update_exit_code (gint status)
{
  switch (status)
    {
    case API_JOB_UPDATE_STATUS_ROLLED_FORWARD: return STG_EXIT_OK;
    case API_JOB_UPDATE_STATUS_ROLLED_BACK: return STG_EXIT_ROLLED_BACK;
    case API_JOB_UPDATE_STATUS_ABORTED: return STG_EXIT_ABORTED;
    case API_JOB_UPDATE_STATUS_FAILED: return STG_EXIT_UPDATE_FAILED;
    default: return STG_EXIT_UPDATE_ERROR;
    }
}

#define WAIT_POLL_MS 10000            /* one long poll's bound */
#define POLL_INTERVAL_US (500 * 1000) /* without the long poll */
#define MIN_READ_GAP_US (20 * 1000)   /* a busy update is read at most 50 times a second */

/* Follows the update to its end: on a terminal a progress bar, on a pipe
 * one line per event. Returns the exit code. */
static int
follow_update (StgCli *cli, StgCliClient *c, ApiJobUpdateKey *key)
{
  guint seen_updates = 0, seen_instances = 0;
  gboolean bar = cli->out_tty && !cli->json;
  /* Follow the daemon's change numbers (a long poll answers within
   * milliseconds of a change); a daemon that cannot say is polled. */
  gint64 seq = -1;
  gboolean follow = stg_cli_client_wait_update (c, key->id, &seq, 0, NULL);

  for (;;)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (ApiJobUpdateDetails) d = details (c, key, &error);
      if (d == NULL)
        return stg_cli_fail (cli, error);
      gint status = d->update->summary->state->status;
      if (bar)
        fputs ("\r\033[K", cli->out);
      for (; seen_updates < d->updateEvents->len; seen_updates++)
        if (!cli->json)
          print_update_event (cli, d->updateEvents->pdata[seen_updates]);
      for (; seen_instances < d->instanceEvents->len; seen_instances++)
        if (!cli->json)
          print_instance_event (cli, d->instanceEvents->pdata[seen_instances]);
      if (!stg_update_status_is_active (status))
        {
          if (cli->json)
            {
              g_autoptr (JsonNode) n = stg_thrift_to_json (d->update->summary);
              stg_cli_print_json (cli, n, FALSE);
            }
          fflush (cli->out);
          return stg_cli_update_exit_code (status);
        }
      if (bar)
        {
          gint done, total;
          progress (d, &done, &total);
          gint width = 30, filled = total > 0 ? done * width / total : 0;
          g_autofree gchar *fill = g_strnfill ((gsize) filled, '#');
          g_autofree gchar *rest = g_strnfill ((gsize) (width - filled), '.');
          fprintf (cli->out, "[%s%s] %d/%d %s", fill, rest, done, total, stg_update_status_name (status));
        }
      fflush (cli->out);
      gint64 asked = g_get_monotonic_time ();
      /* A long poll that fails (no leader within the wait) is tried
       * again after the next read: the update goes on meanwhile. */
      if (!follow || !stg_cli_client_wait_update (c, key->id, &seq, WAIT_POLL_MS, NULL))
        g_usleep (POLL_INTERVAL_US);
      else if (g_get_monotonic_time () - asked < MIN_READ_GAP_US)
        g_usleep ((gulong) (MIN_READ_GAP_US - (g_get_monotonic_time () - asked)));
    }
}

/* What update start says: the update, what it changes (when the daemon
 * could say) and where to watch it, as Aurora's client prints the update's
 * URL. */
static void
announce (StgCli *cli, StgCliClient *c, const gchar *text, ApiJobUpdateKey *key,
          ApiGetJobUpdateDiffResult *diff)
{
  g_autofree gchar *id = g_uri_escape_string (key->id, NULL, FALSE);

  fprintf (cli->out, "started update %s of %s\n", key->id, text);
  if (diff != NULL)
    stg_cli_print_diff_groups (cli, diff);
  fprintf (cli->out, "watch it at %s/#/update/%s/%s/%s/%s\n", stg_cli_client_target (c)->base_url,
           key->job->role, key->job->environment, key->job->name, id);
}

int
stg_cli_update_started (StgCli *cli, StgCliClient *c, const gchar *text, const gchar *what,
                        ApiJobUpdateKey *key, ApiGetJobUpdateDiffResult *diff, gboolean wait)
{
  if (!cli->json)
    {
      if (what != NULL)
        fprintf (cli->out, "%s\n", what);
      announce (cli, c, text, key, diff);
    }
  else if (!wait)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (key);
      stg_cli_print_json (cli, n, FALSE);
    }
  fflush (cli->out);
  return wait ? follow_update (cli, c, key) : STG_EXIT_OK;
}

/* update start --dry-run: what the update would change and the batches
 * it would run, with their predicted times; nothing is started. */
static int
rehearse (StgCli *cli, StgCliClient *c, const gchar *text, ApiJobUpdateRequest *req)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiResponse) r = stg_cli_get_job_update_diff (c, req, &error);

  if (r == NULL)
    return stg_cli_fail (cli, error);
  ApiGetJobUpdateDiffResult *diff = r->result->getJobUpdateDiffResult;
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (diff);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  fprintf (cli->out, "a rehearsal of the update of %s (nothing is started):\n", text);
  stg_cli_print_diff_groups (cli, diff);
  g_autofree gchar *notes = stg_cli_change_notes (diff, req->taskConfig);
  if (notes != NULL)
    fprintf (cli->out, "%s\n", notes);
  if (diff->__isset_rehearsal && diff->rehearsal != NULL)
    stg_cli_print_rehearsal (cli, diff->rehearsal, "");
  else
    stg_cli_warn (cli, "staggerd at %s sent no rehearsal (an older version?)",
                  stg_cli_client_target (c)->base_url);
  return STG_EXIT_OK;
}

static int
update_start (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autofree gchar *message = NULL;
  gboolean wait = FALSE, force = FALSE, dry_run = FALSE;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;
  const GOptionEntry entries[] = {
    { "message", 'm', 0, G_OPTION_ARG_STRING, &message, "Why, recorded with the update", "TEXT" },
    { "wait", 'w', 0, G_OPTION_ARG_NONE, &wait,
      "Follow the update to its end (exit codes as update wait)", NULL },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force,
      "Start even though an active rollout plan has yet to update the job", NULL },
    { "dry-run", 'n', 0, G_OPTION_ARG_NONE, &dry_run,
      "Start nothing: print what would change, the batches it would run and their predicted "
      "times (from the job's last finished update)",
      NULL },
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("start"), "update", entries,
                      "Starts moving the job to the job file's configuration, on every instance "
                      "or only those listed after the key (a canary: cluster/role/env/name/0-1). "
                      "A job that an active rollout plan has yet to update is refused, naming the "
                      "plan, unless --force. With --dry-run, a rehearsal: nothing is started.",
                      2, 2, &argc, &argv, &code))
    return code;
  g_autoptr (StgJobPath) parsed = stg_job_path_parse (argv[1], TRUE, &error);
  g_autoptr (StgJobFile) jf = parsed ? stg_job_file_load (argv[2], g_get_user_name (), &error) : NULL;
  if (jf != NULL && !stg_job_file_check_key (jf, parsed, &error))
    g_clear_pointer (&jf, stg_job_file_free);
  g_autoptr (StgCliClient) c = jf ? stg_cli_client_for_job (cli, argv[1], TRUE, &path, &error) : NULL;
  g_autoptr (ApiJobUpdateRequest) req = c ? stg_job_file_update_request (jf, path->instances) : NULL;
  if (req != NULL && force)
    g_object_set (req, "overridePlan", TRUE, NULL);
  if (req != NULL && dry_run)
    return rehearse (cli, c, argv[1], req);
  g_autoptr (ApiResponse) diff = req && !cli->json ? stg_cli_get_job_update_diff (c, req, NULL) : NULL;
  g_autoptr (ApiResponse) r = req ? stg_cli_start_job_update (c, req, message, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  /* What staggerd warns of (an SLA-aware update with no SLA to wait for). */
  for (guint i = 0; r->details != NULL && i < r->details->len; i++)
    stg_cli_warn (cli, "%s", ((ApiResponseDetail *) r->details->pdata[i])->message);
  g_autofree gchar *notes = diff ? stg_cli_change_notes (diff->result->getJobUpdateDiffResult,
                                                         req->taskConfig)
                                 : NULL;
  return stg_cli_update_started (cli, c, argv[1], notes, r->result->startJobUpdateResult->key,
                                 diff ? diff->result->getJobUpdateDiffResult : NULL, wait);
}

static int
update_wait (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autofree gchar *id = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;
  const GOptionEntry entries[] = {
    { "id", 0, 0, G_OPTION_ARG_STRING, &id, "This update (default: the job's newest)", "ID" },
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("wait"), "update", entries,
                      "Blocks until the update ends. Exit 0 for ROLLED_FORWARD, 10 ROLLED_BACK, "
                      "11 ABORTED, 12 FAILED, 13 ERROR.", 1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = stg_cli_client_for_job (cli, argv[1], FALSE, &path, &error);
  g_autoptr (ApiJobUpdateKey) key = c ? stg_cli_find_update (c, path->key, id, FALSE, &error)
                                      : NULL;
  if (key == NULL)
    return stg_cli_fail (cli, error);
  return follow_update (cli, c, key);
}

static int
control (StgCli *cli, int argc, gchar **argv, const gchar *name, StgCliUpdateAction action,
         const gchar *done)
{
  int code;
  g_autofree gchar *message = NULL, *id = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;
  const GOptionEntry entries[] = {
    { "message", 'm', 0, G_OPTION_ARG_STRING, &message, "Why, recorded with the event", "TEXT" },
    { "id", 0, 0, G_OPTION_ARG_STRING, &id, "This update (default: the job's active one)", "ID" },
    { NULL },
  };

  if (!stg_cli_parse (cli, self (name), "update", entries, NULL, 1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = stg_cli_client_for_job (cli, argv[1], FALSE, &path, &error);
  g_autoptr (ApiJobUpdateKey) key = c ? stg_cli_find_update (c, path->key, id, TRUE, &error) : NULL;
  g_autoptr (ApiResponse) r = key ? stg_cli_control_job_update (c, action, key, message, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  if (!cli->json)
    fprintf (cli->out, "%s update %s of %s\n", done, key->id, argv[1]);
  return STG_EXIT_OK;
}

static int
update_pause (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "pause", STG_CLI_UPDATE_PAUSE, "paused");
}

static int
update_resume (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "resume", STG_CLI_UPDATE_RESUME, "resumed");
}

static int
update_abort (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "abort", STG_CLI_UPDATE_ABORT, "aborted");
}

static int
update_rollback (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "rollback", STG_CLI_UPDATE_ROLLBACK, "rolling back");
}

static int
update_pulse (StgCli *cli, int argc, gchar **argv)
{
  int code;
  gint every = 0;
  g_autofree gchar *id = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;
  const GOptionEntry entries[] = {
    { "every", 0, 0, G_OPTION_ARG_INT, &every, "Keep pulsing every SECS seconds until the update ends", "SECS" },
    { "id", 0, 0, G_OPTION_ARG_STRING, &id, "This update (default: the job's active one)", "ID" },
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("pulse"), "update", entries,
                      "Lets a coordinated update (pulse_interval_secs) go on for another interval.",
                      1, 1, &argc, &argv, &code))
    return code;
  if (every < 0 || every > 86400)
    return stg_cli_usage_error (cli, "--every: expected 1 to 86400 seconds");
  g_autoptr (StgCliClient) c = stg_cli_client_for_job (cli, argv[1], FALSE, &path, &error);
  g_autoptr (ApiJobUpdateKey) key = c ? stg_cli_find_update (c, path->key, id, TRUE, &error) : NULL;
  if (key == NULL)
    return stg_cli_fail (cli, error);
  for (;;)
    {
      g_autoptr (ApiResponse) r = stg_cli_pulse_job_update (c, key, &error);
      if (r == NULL)
        return stg_cli_fail (cli, error);
      gint status = r->result->pulseJobUpdateResult->status;
      if (!cli->json)
        {
          g_autofree gchar *now = stg_cli_format_time (stg_cli_now_ms ());
          fprintf (cli->out, "%s  pulsed update %s: %s\n", now, key->id, stg_pulse_status_name (status));
          fflush (cli->out);
        }
      if (every == 0 || status == API_JOB_UPDATE_PULSE_STATUS_FINISHED)
        return STG_EXIT_OK;
      g_usleep ((gulong) every * G_USEC_PER_SEC);
    }
}

static int
update_list (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autofree gchar *status = NULL, *user = NULL, *cluster = NULL, *role = NULL;
  gint limit = 20;
  g_autoptr (GError) error = NULL;
  const GOptionEntry entries[] = {
    { "status", 0, 0, G_OPTION_ARG_STRING, &status, "Only updates in this status (e.g. ROLLING_FORWARD)", "STATUS" },
    { "user", 0, 0, G_OPTION_ARG_STRING, &user, "Only updates started by USER", "USER" },
    { "limit", 0, 0, G_OPTION_ARG_INT, &limit, "At most N updates, newest first (default 20)", "N" },
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("list"), "update", entries, "Lists updates, newest first.",
                      0, 1, &argc, &argv, &code))
    return code;
  if (limit < 1 || limit > 10000)
    return stg_cli_usage_error (cli, "--limit: expected 1 to 10000");
  gint wanted = -1;
  if (status != NULL && (wanted = stg_update_status_from_name (status)) < 0)
    return stg_cli_usage_error (cli, "--status: unknown update status '%s'", status);
  if (!stg_cli_parse_scope (argc > 1 ? argv[1] : NULL, &cluster, &role, &error))
    return stg_cli_fail (cli, error);
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, cluster, &error);
  if (c == NULL)
    return stg_cli_fail (cli, error);
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "limit", limit,
                                                  "role", role ? role : "", "user", user ? user : "", NULL);
  if (wanted >= 0)
    g_hash_table_add (q->updateStatuses, GINT_TO_POINTER (wanted));
  g_autoptr (ApiResponse) r = stg_cli_get_job_update_summaries (c, q, &error);
  if (r == NULL)
    return stg_cli_fail (cli, error);
  GPtrArray *list = r->result->getJobUpdateSummariesResult->updateSummaries;
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (r->result->getJobUpdateSummariesResult);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  if (list->len == 0)
    {
      fprintf (cli->out, "no updates\n");
      return STG_EXIT_OK;
    }
  g_autoptr (StgTable) t = stg_table_new ("ID", "JOB", "STATUS", "USER", "STARTED", "CHANGED", NULL);
  for (guint i = 0; i < list->len; i++)
    {
      ApiJobUpdateSummary *s = list->pdata[i];
      g_autofree gchar *job = stg_job_key_to_string (s->key->job);
      g_autofree gchar *created = stg_cli_format_time (s->state->createdTimestampMs);
      g_autofree gchar *changed = stg_cli_format_time (s->state->lastModifiedTimestampMs);
      stg_table_row (t);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", s->key->id);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s/%s", stg_cli_client_cluster (c), job);
      stg_table_cell (t, stg_cli_update_status_style (s->state->status), "%s",
                      stg_update_status_name (s->state->status));
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", s->user && *s->user ? s->user : "-");
      stg_table_cell (t, STG_STYLE_DIM, "%s", created);
      stg_table_cell (t, STG_STYLE_DIM, "%s", changed);
    }
  stg_table_print (t, cli);
  return STG_EXIT_OK;
}

const StgCliCommand stg_cli_update_commands[] = {
  { "start", "CLUSTER/ROLE/ENV/NAME[/INSTANCES] CONFIG", "Start an update to a job file",
    update_start },
  { "info", "CLUSTER/ROLE/ENV/NAME", "Show an update's status, progress and events", update_info },
  { "pause", "CLUSTER/ROLE/ENV/NAME", "Pause the job's active update", update_pause },
  { "resume", "CLUSTER/ROLE/ENV/NAME", "Resume the job's paused update", update_resume },
  { "abort", "CLUSTER/ROLE/ENV/NAME", "Abort the job's active update where it stands",
    update_abort },
  { "rollback", "CLUSTER/ROLE/ENV/NAME", "Roll the job's active update back", update_rollback },
  { "pulse", "CLUSTER/ROLE/ENV/NAME", "Pulse a coordinated update", update_pulse },
  { "list", "[CLUSTER[/ROLE]]", "List updates, newest first", update_list },
  { "wait", "CLUSTER/ROLE/ENV/NAME", "Wait for an update to end; the exit code says how",
    update_wait },
  { "timeline", "CLUSTER/ROLE/ENV/NAME",
    "Show where an update's time went, batch by batch and "
    "instance by instance",
    stg_cli_update_timeline },
  { NULL, NULL, NULL, NULL },
};
