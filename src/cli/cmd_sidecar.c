/* cmd_sidecar.c: stagger sidecar apply|list|status|wait|pause|resume|
 * abort|rollback|partition|delete: sidecar sets (stagger-sidecar(5)), the
 * sidecars the fleet runtime injects into the pods of the jobs they
 * select, and the updates that roll a set's new version across those pods
 * without touching their main containers. One thread: the process's main
 * thread.
 */
#include "config.h"

#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/jobfile.h"
#include "cli/output.h"
#include "common/thrift_json.h"
#include "cli/updates.h"
#include "common/enums.h"

#define WAIT_POLL_US (500 * 1000)

static const StgCliCommand *
self (const gchar *name)
{
  return stg_cli_find_command (stg_cli_sidecar_commands, name);
}

static gboolean
active (gint status)
{
  return stg_update_status_is_active (status);
}

static gchar *
selector_text (ApiSidecarSelector *s)
{
  return g_strdup_printf ("%s/%s/%s", s->role, s->environment, s->name);
}

static ApiSidecarSetDetails *
details (StgCliClient *c, const gchar *name, GError **error)
{
  g_autoptr (ApiResponse) r = stg_cli_get_sidecar_set_details (c, name, error);

  return r ? g_object_ref (r->result->getSidecarSetDetailsResult->details) : NULL;
}

/* ---- showing a set ------------------------------------------------------------------ */

static void
print_summary (StgCli *cli, ApiSidecarSetSummary *s)
{
  g_autofree gchar *since = stg_cli_format_time (s->sinceMs);
  g_autofree gchar *sel = selector_text (s->selector);
  g_autofree gchar *status = stg_cli_styled (cli->color_out,
                                             stg_cli_update_status_style (s->status),
                                             stg_update_status_name (s->status));
  ApiSidecarUpdateSettings *st = s->settings;

  fprintf (cli->out, "sidecar set %s: %s since %s (version %d to %d)\n", s->name, status, since,
           s->fromVersion, s->toVersion);
  if (s->reason[0] != '\0')
    fprintf (cli->out, "  %s\n", s->reason);
  fprintf (cli->out, "  selects %s; new pods get version %d (newest %d)\n", sel, s->injectVersion,
           s->version);
  fprintf (cli->out,
           "  %d of %d instances run version %d; at most %d unavailable, partition %d, "
           "at most %d failed starts each, %s\n",
           s->updated, s->instances,
           s->status == API_JOB_UPDATE_STATUS_ROLLING_BACK ||
                   s->status == API_JOB_UPDATE_STATUS_ROLL_BACK_PAUSED ||
                   s->status == API_JOB_UPDATE_STATUS_ROLLED_BACK
               ? s->fromVersion
               : s->toVersion,
           st->maxUnavailable, st->partition, st->maxFailures,
           st->rollbackOnFailure ? "rolled back on failure" : "no rollback on failure");
}

static gchar *
slots_text (ApiSidecarInstance *i)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint k = 0; k < i->slots->len; k++)
    {
      ApiSidecarSlot *slot = i->slots->pdata[k];
      g_autofree gchar *v = slot->containerId[0] == '\0' ? g_strdup ("-")
                            : slot->version == 0         ? g_strdup ("empty")
                                                         : g_strdup_printf ("%d", slot->version);
      g_string_append_printf (s, "%s%s=%s%s", k > 0 ? " " : "", slot->name, v,
                              slot->serving ? "*" : "");
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static void
print_instances (StgCli *cli, GPtrArray *instances)
{
  g_autoptr (StgTable) t = stg_table_new ("INSTANCE", "HOST", "SERVING", "WANT", "STATUS", "SLOTS",
                                          "REASON", NULL);

  for (guint n = 0; n < instances->len; n++)
    {
      ApiSidecarInstance *i = instances->pdata[n];
      g_autofree gchar *key = stg_job_key_to_string (i->instance->jobKey);
      g_autofree gchar *slots = slots_text (i);
      stg_table_row (t);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s/%d%s", key, i->instance->instanceId,
                      i->heldBack ? " (held)" : "");
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", i->host[0] ? i->host : "-");
      stg_table_cell (t, STG_STYLE_PLAIN, "%d", i->version);
      stg_table_cell (t, STG_STYLE_PLAIN, "%d", i->wantVersion);
      stg_table_cell (t, stg_cli_schedule_status_style (i->status), "%s",
                      stg_schedule_status_name (i->status));
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", slots);
      stg_table_cell (t, STG_STYLE_DIM, "%s", i->reason);
    }
  stg_table_print (t, cli);
}

static void
print_events (StgCli *cli, GPtrArray *events, guint last)
{
  for (guint n = events->len > last ? events->len - last : 0; n < events->len; n++)
    {
      ApiSidecarEvent *e = events->pdata[n];
      g_autofree gchar *key = e->__isset_instance ? stg_job_key_to_string (e->instance->jobKey)
                                                  : NULL;
      g_autofree gchar *what = key ? g_strdup_printf ("%s/%d", key, e->instance->instanceId)
                                   : g_strdup (stg_update_status_name (e->status));
      stg_cli_print_event (cli, e->timestampMs, what,
                           key ? STG_STYLE_PLAIN : stg_cli_update_status_style (e->status),
                           e->__isset_user ? e->user : NULL, e->message);
    }
}

static int
show (StgCli *cli, ApiSidecarSetDetails *d)
{
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (d);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  print_summary (cli, d->summary);
  if (d->instances->len > 0)
    {
      fputc ('\n', cli->out);
      print_instances (cli, d->instances);
    }
  if (d->events->len > 0)
    {
      fputc ('\n', cli->out);
      print_events (cli, d->events, 10);
    }
  return STG_EXIT_OK;
}

/* Follows set @name's update until it is no longer active. */
static int
follow (StgCli *cli, StgCliClient *c, const gchar *name)
{
  g_autoptr (GError) error = NULL;
  gint shown = -1;
  guint updated = G_MAXUINT;

  for (;;)
    {
      g_autoptr (ApiSidecarSetDetails) d = details (c, name, &error);
      if (d == NULL)
        return stg_cli_fail (cli, error);
      ApiSidecarSetSummary *s = d->summary;
      if (!cli->json && ((gint) s->status != shown || (guint) s->updated != updated))
        {
          g_autofree gchar *now = stg_cli_format_time (stg_cli_now_ms ());
          fprintf (cli->out, "%s  %s: %s, %d of %d instances updated%s%s\n", now, name,
                   stg_update_status_name (s->status), s->updated, s->instances,
                   s->reason[0] ? " — " : "", s->reason);
          fflush (cli->out);
          shown = s->status;
          updated = (guint) s->updated;
        }
      if (!active (s->status))
        {
          if (cli->json)
            show (cli, d);
          return stg_cli_update_exit_code (s->status);
        }
      g_usleep (WAIT_POLL_US);
    }
}

/* ---- the commands ---------------------------------------------------------------------- */

static int
sidecar_apply (StgCli *cli, int argc, gchar **argv)
{
  int code;
  gboolean wait = FALSE;
  g_autofree gchar *message = NULL;
  g_autoptr (GError) error = NULL;
  const GOptionEntry entries[] = {
    { "message", 'm', 0, G_OPTION_ARG_STRING, &message, "Why, recorded with the change", "TEXT" },
    { "wait", 'w', 0, G_OPTION_ARG_NONE, &wait, "Follow the update to its end", NULL },
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("apply"), "sidecar", entries,
                      "Creates the sidecar set FILE describes (stagger-sidecar(5)), or applies "
                      "it to the set of that name: a changed sidecar is the set's new version, "
                      "rolled to the pods that carry it under the file's update_config; a "
                      "changed selector or update_config alone starts nothing. Pods get a set "
                      "when they are made: the instances of a job it newly selects get it when "
                      "they are next replaced. With --wait, exits as 'update wait' does.",
                      1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgSidecarFile) file = stg_sidecar_file_load (argv[1], &error);
  if (file == NULL)
    return stg_cli_fail (cli, error);
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, file->cluster, &error);
  g_autoptr (ApiResponse) r = c ? stg_cli_apply_sidecar_set (c, file->set, message, &error) : NULL;
  g_autoptr (ApiSidecarSetDetails) d = r ? details (c, file->set->name, &error) : NULL;
  if (d == NULL)
    return stg_cli_fail (cli, error);
  if (wait && active (d->summary->status))
    return follow (cli, c, file->set->name);
  return show (cli, d);
}

static int
sidecar_list (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;

  if (!stg_cli_parse (cli, self ("list"), "sidecar", NULL,
                      "Lists the sidecar sets: what each selects, its versions and its last "
                      "update.",
                      0, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, argc > 1 ? argv[1] : NULL, &error);
  g_autoptr (ApiResponse) r = c ? stg_cli_get_sidecar_sets (c, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (r->result->getSidecarSetsResult);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  GPtrArray *sets = r->result->getSidecarSetsResult->sets;
  g_autoptr (StgTable) t = stg_table_new ("NAME", "SELECTS", "VERSION", "STATUS", "UPDATED",
                                          "NEW PODS GET", NULL);
  for (guint i = 0; i < sets->len; i++)
    {
      ApiSidecarSetSummary *s = sets->pdata[i];
      g_autofree gchar *sel = selector_text (s->selector);
      stg_table_row (t);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", s->name);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", sel);
      stg_table_cell (t, STG_STYLE_PLAIN, "%d to %d", s->fromVersion, s->toVersion);
      stg_table_cell (t, stg_cli_update_status_style (s->status), "%s",
                      stg_update_status_name (s->status));
      stg_table_cell (t, STG_STYLE_PLAIN, "%d/%d", s->updated, s->instances);
      stg_table_cell (t, STG_STYLE_PLAIN, "%d", s->injectVersion);
    }
  stg_table_print (t, cli);
  return STG_EXIT_OK;
}

/* The client and set name of "[CLUSTER/]NAME". */
static StgCliClient *
client_for (StgCli *cli, const gchar *arg, gchar **name, GError **error)
{
  g_autofree gchar *cluster = NULL;

  if (!stg_cli_parse_cluster_name (arg, "NAME", &cluster, name, error))
    return NULL;
  return stg_cli_client_new (cli, cluster, error);
}

static int
sidecar_status (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *name = NULL;

  if (!stg_cli_parse (cli, self ("status"), "sidecar", NULL,
                      "Shows a sidecar set: its last update, each instance that carries it (the "
                      "version serving and the one asked for, its slots: a hot sidecar's two, "
                      "* on the one serving) and its last events.",
                      1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = client_for (cli, argv[1], &name, &error);
  g_autoptr (ApiSidecarSetDetails) d = c ? details (c, name, &error) : NULL;
  if (d == NULL)
    return stg_cli_fail (cli, error);
  return show (cli, d);
}

static int
sidecar_wait (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *name = NULL;

  if (!stg_cli_parse (cli, self ("wait"), "sidecar", NULL,
                      "Follows a sidecar set's update until it is no longer active (a paused one "
                      "is waited for); exits as 'update wait' does: 0 for ROLLED_FORWARD, 10 "
                      "ROLLED_BACK, 11 ABORTED, 12 FAILED.",
                      1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = client_for (cli, argv[1], &name, &error);
  if (c == NULL)
    return stg_cli_fail (cli, error);
  return follow (cli, c, name);
}

/* pause, resume, abort, rollback, partition and delete. */
static int
control (StgCli *cli, int argc, gchar **argv, const gchar *command, const gchar *description)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *name = NULL, *message = NULL;
  gboolean partition = g_str_equal (command, "partition");
  const GOptionEntry entries[] = {
    { "message", 'm', 0, G_OPTION_ARG_STRING, &message, "Why, recorded with the change", "TEXT" },
    { NULL },
  };
  gint64 n = 0;

  if (!stg_cli_parse (cli, self (command), "sidecar", entries, description, partition ? 2 : 1,
                      partition ? 2 : 1, &argc, &argv, &code))
    return code;
  if (partition && (!g_ascii_string_to_signed (argv[2], 10, 0, G_MAXINT32, &n, NULL)))
    return stg_cli_usage_error (cli, "partition: \"%s\" is not a count of instances (0 or more)",
                                argv[2]);
  g_autoptr (StgCliClient) c = client_for (cli, argv[1], &name, &error);
  g_autoptr (ApiResponse) r = NULL;
  if (c != NULL && partition)
    r = stg_cli_set_sidecar_partition (c, name, (gint32) n, message, &error);
  else if (c != NULL && g_str_equal (command, "delete"))
    r = stg_cli_delete_sidecar_set (c, name, message, &error);
  else if (c != NULL)
    {
      StgCliUpdateAction a = g_str_equal (command, "pause")    ? STG_CLI_UPDATE_PAUSE
                             : g_str_equal (command, "resume") ? STG_CLI_UPDATE_RESUME
                             : g_str_equal (command, "abort")  ? STG_CLI_UPDATE_ABORT
                                                               : STG_CLI_UPDATE_ROLLBACK;
      r = stg_cli_control_sidecar_set (c, a, name, message, &error);
    }
  if (r == NULL)
    return stg_cli_fail (cli, error);
  if (g_str_equal (command, "delete"))
    {
      fprintf (cli->out, "sidecar set %s deleted: its containers leave the pods\n", name);
      return STG_EXIT_OK;
    }
  g_autoptr (ApiSidecarSetDetails) d = details (c, name, &error);
  if (d == NULL)
    return stg_cli_fail (cli, error);
  return show (cli, d);
}

static int
sidecar_pause (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "pause",
                  "Pauses a sidecar set's update: no more instances start moving; those "
                  "moving finish.");
}

static int
sidecar_resume (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "resume", "Resumes a paused sidecar set's update.");
}

static int
sidecar_abort (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "abort",
                  "Stops a sidecar set's update where it is: instances keep the version they "
                  "run (those moving finish); nothing is rolled back.");
}

static int
sidecar_rollback (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "rollback",
                  "Rolls a sidecar set's last update back: every instance moved to its version "
                  "goes back to the one before, hot sidecars by the same hand-over, the last "
                  "moved first; new pods get the old version again. Also after the update "
                  "ended (ROLLED_FORWARD, ABORTED, FAILED).");
}

static int
sidecar_partition (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "partition",
                  "Keeps the last N instances (by job key, then instance) on the old version: "
                  "a lower partition lets the update go on to more of them (0: all).");
}

static int
sidecar_delete (StgCli *cli, int argc, gchar **argv)
{
  return control (cli, argc, argv, "delete",
                  "Deletes a sidecar set: its containers leave every pod (the pods' main "
                  "containers keep running) and new pods no longer get it.");
}

const StgCliCommand stg_cli_sidecar_commands[] = {
  { "apply", "FILE", "Create a sidecar set, or roll out its new version", sidecar_apply },
  { "list", "[CLUSTER]", "List the sidecar sets", sidecar_list },
  { "status", "[CLUSTER/]NAME", "Show a sidecar set and its instances", sidecar_status },
  { "wait", "[CLUSTER/]NAME", "Follow a sidecar set's update to its end", sidecar_wait },
  { "pause", "[CLUSTER/]NAME", "Pause a sidecar set's update", sidecar_pause },
  { "resume", "[CLUSTER/]NAME", "Resume a paused sidecar set's update", sidecar_resume },
  { "abort", "[CLUSTER/]NAME", "Stop a sidecar set's update where it is", sidecar_abort },
  { "rollback", "[CLUSTER/]NAME", "Roll a sidecar set's update back", sidecar_rollback },
  { "partition", "[CLUSTER/]NAME N", "Keep the last N instances on the old version",
    sidecar_partition },
  { "delete", "[CLUSTER/]NAME", "Delete a sidecar set, taking it out of every pod",
    sidecar_delete },
  { NULL, NULL, NULL, NULL },
};
