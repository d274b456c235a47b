/* cmd_host.c: stagger host list|drain|undrain (and `stagger hosts`; host
 * maintenance is cmd_maintenance.c's): the
 * fleet runtime's hosts (getHosts), and maintenance the way kubectl drain
 * does it: the host is drained first (drainHost: nothing new lands on it),
 * then each job's instances there get a rolling restart, which starts them
 * on other hosts a batch at a time, above the job's in-service floor. One
 * thread: the process's main thread.
 */
#include "config.h"

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/jobfile.h"
#include "cli/output.h"
#include "common/thrift_json.h"
#include "cli/updates.h"
#include "common/enums.h"

static const StgCliCommand *
self (const gchar *name)
{
  return stg_cli_find_command (stg_cli_host_commands, name);
}

static gchar *
state_text (ApiFleetHostStatus *h, gint64 now)
{
  g_autofree gchar *down = h->reachable ? NULL
                                        : stg_cli_format_duration (now - h->unreachableSinceMs);
  g_autofree gchar *state = h->reachable ? g_strdup ("up")
                                         : g_strdup_printf ("unreachable %s", down);

  return h->draining ? g_strdup_printf ("%s, draining", state) : g_steal_pointer (&state);
}

static gchar *
attributes_text (GHashTable *attributes)
{
  g_autoptr (GList) names = g_list_sort (g_hash_table_get_keys (attributes),
                                         (GCompareFunc) g_strcmp0);
  g_autoptr (GString) s = g_string_new (NULL);

  for (GList *l = names; l != NULL; l = l->next)
    g_string_append_printf (s, "%s%s=%s", s->len ? " " : "", (gchar *) l->data,
                            (gchar *) g_hash_table_lookup (attributes, l->data));
  return g_strdup (s->len ? s->str : "-");
}

static int
host_list (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;

  if (!stg_cli_parse (cli, self ("list"), "host", NULL,
                      "Lists the fleet runtime's hosts: up or unreachable (since when), "
                      "draining, their instances, address, attributes and maintenance mode "
                      "(NONE, SCHEDULED, DRAINING, DRAINED). The local runtime has one host, "
                      "this machine, under the name host maintenance takes.",
                      0, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, argc > 1 ? argv[1] : NULL, &error);
  g_autoptr (ApiResponse) r = c ? stg_cli_get_hosts (c, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  GPtrArray *hosts = r->result->getHostsResult->hosts;
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (r->result->getHostsResult);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  gint64 now = stg_cli_now_ms ();
  g_autoptr (StgTable) t = stg_table_new ("HOST", "STATE", "INSTANCES", "ADDRESS", "ATTRIBUTES",
                                          "MAINTENANCE", NULL);
  for (guint i = 0; i < hosts->len; i++)
    {
      ApiFleetHostStatus *h = hosts->pdata[i];
      g_autofree gchar *state = state_text (h, now);
      g_autofree gchar *attrs = attributes_text (h->attributes);
      stg_table_row (t);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", h->name);
      stg_table_cell (t,
                      !h->reachable ? STG_STYLE_BAD
                      : h->draining ? STG_STYLE_WARN
                                    : STG_STYLE_GOOD,
                      "%s", state);
      stg_table_cell (t, STG_STYLE_PLAIN, "%u", h->instances->len);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", h->address);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", attrs);
      stg_table_cell (t, h->mode == API_MAINTENANCE_MODE_NONE ? STG_STYLE_PLAIN : STG_STYLE_WARN,
                      "%s", stg_maintenance_mode_name (h->mode));
    }
  stg_table_print (t, cli);
  for (guint i = 0; i < hosts->len; i++)
    {
      ApiFleetHostStatus *h = hosts->pdata[i];
      if (!h->reachable && h->lastError[0] != '\0')
        fprintf (cli->out, "%s: %s\n", h->name, h->lastError);
      if (h->draining && h->instances->len > 0 && h->drainBlocked[0] != '\0')
        fprintf (cli->out, "%s: the drain waits, nothing stopped, for room elsewhere: %s\n",
                 h->name, h->drainBlocked);
      g_auto (GStrv) waits = h->slaWait != NULL && h->slaWait[0] != '\0'
                                 ? g_strsplit (h->slaWait, "\n", -1)
                                 : NULL;
      for (guint w = 0; waits != NULL && waits[w] != NULL; w++)
        fprintf (cli->out, "%s: %s\n", h->name, waits[w]);
    }
  return STG_EXIT_OK;
}

/* The instance ids on @host, by job ("role/env/name" -> GArray of gint32,
 * with the key kept in @keys). */
static GHashTable *
instances_by_job (ApiFleetHostStatus *host, GHashTable *keys)
{
  GHashTable *jobs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                            (GDestroyNotify) g_array_unref);

  for (guint i = 0; i < host->instances->len; i++)
    {
      ApiInstanceKey *k = host->instances->pdata[i];
      gchar *name = stg_job_key_to_string (k->jobKey);
      GArray *ids = g_hash_table_lookup (jobs, name);
      if (ids == NULL)
        {
          ids = g_array_new (FALSE, FALSE, sizeof (gint32));
          g_hash_table_insert (keys, g_strdup (name), g_object_ref (k->jobKey));
          g_hash_table_insert (jobs, name, ids);
        }
      else
        g_free (name);
      g_array_append_val (ids, k->instanceId);
    }
  return jobs;
}

/* The watch time when neither --watch-secs nor the job says one. */
#define DEFAULT_WATCH_MS 30000

typedef struct
{
  gint batch, watch, floor; /* watch -1: the job's own watch time */
  gboolean wait, force;
  const gchar *message;
} DrainOptions;

/* @name among @hosts, or NULL. */
static ApiFleetHostStatus *
find_host (ApiResponse *r, const gchar *name)
{
  GPtrArray *hosts = r->result->getHostsResult->hosts;

  for (guint i = 0; i < hosts->len; i++)
    if (g_str_equal (((ApiFleetHostStatus *) hosts->pdata[i])->name, name))
      return hosts->pdata[i];
  return NULL;
}

/* Starts the rolling restart that moves @ids of @key off the drained host. */
static int
move_off (StgCli *cli, StgCliClient *c, const gchar *host, ApiJobKey *key, GArray *ids,
          const DrainOptions *o)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobConfiguration) job = stg_cli_current_job (c, key, &error);
  g_autofree gchar *name = stg_job_key_to_string (key);
  g_autofree gchar *text = g_strdup_printf ("%s/%s", stg_cli_client_cluster (c), name);

  if (job == NULL)
    return stg_cli_fail (cli, error);
  /* The floor: what the user says, else all but one batch of the job.
   * The watch time: what the user says, else that of the job's newest
   * update (its job file's watch_secs). */
  gint floor = o->floor >= 0 ? o->floor : MAX (job->instanceCount - o->batch, 0);
  g_autoptr (ApiJobUpdateSettings) newest = o->watch < 0 ? stg_cli_newest_update_settings (c, key)
                                                         : NULL;
  gint watch_ms = o->watch >= 0 ? o->watch * 1000
                  : newest      ? newest->minWaitInInstanceRunningMs
                                : DEFAULT_WATCH_MS;
  g_autoptr (ApiJobUpdateSettings) settings = g_object_new (API_TYPE_JOB_UPDATE_SETTINGS,
                                                            "updateGroupSize", o->batch,
                                                            "minWaitInInstanceRunningMs", watch_ms,
                                                            "rollbackOnFailure", FALSE,
                                                            "restartInstances", TRUE,
                                                            "minInService", floor, NULL);
  g_autoptr (StgRanges) ranges = stg_ranges_new ();
  for (guint i = 0; i < ids->len; i++)
    stg_ranges_add_one (ranges, g_array_index (ids, gint32, i));
  stg_job_file_add_ranges (settings->updateOnlyTheseInstances, ranges);
  settings->__isset_updateOnlyTheseInstances = TRUE;
  g_autoptr (ApiJobUpdateRequest) req = g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig",
                                                      job->taskConfig, "instanceCount",
                                                      job->instanceCount, "settings", settings,
                                                      NULL);
  g_autofree gchar *why = g_strdup_printf ("drain %s%s%s", host, o->message ? ": " : "",
                                           o->message ? o->message : "");
  g_autoptr (ApiResponse) r = stg_cli_start_job_update (c, req, why, &error);
  if (r == NULL)
    {
      g_prefix_error (&error, "%s: ", text);
      return stg_cli_fail (cli, error);
    }
  g_autofree gchar *range_text = stg_cli_ranges_text (ranges);
  g_autofree gchar *watched = watch_ms % 1000 == 0 ? g_strdup_printf ("%d s", watch_ms / 1000)
                                                   : g_strdup_printf ("%d ms", watch_ms);
  g_autofree gchar *what = g_strdup_printf (
      "moving instances %s of %s off %s, %d at a time, at least %d in service, each watched "
      "%s%s",
      range_text, text, host, o->batch, floor, watched,
      o->watch >= 0 ? ""
      : newest      ? " (the job's watch_secs)"
                    : " (the job has had no update to take a watch time from)");
  return stg_cli_update_started (cli, c, text, what, r->result->startJobUpdateResult->key, NULL,
                                 o->wait);
}

static int
drain_or_open (StgCli *cli, const gchar *arg, gboolean drain, const DrainOptions *o)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *cluster = NULL, *host = NULL;

  if (!stg_cli_parse_cluster_name (arg, "HOST", &cluster, &host, &error))
    return stg_cli_fail (cli, error);
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, cluster, &error);
  /* Room first: a drain that would stop instances with nowhere to go is
   * refused before anything changes. */
  g_autoptr (ApiResponse) before = c && drain && !o->force ? stg_cli_get_hosts (c, &error) : NULL;
  ApiFleetHostStatus *b = before ? find_host (before, host) : NULL;
  if (b != NULL && b->drainBlocked[0] != '\0')
    {
      g_autoptr (GError) refused = g_error_new (
          STG_CLI_ERROR, STG_CLI_ERROR_FAILED,
          "host %s cannot be drained now: %s.\nNothing was changed or stopped. Make room (another "
          "host, a higher limit in the job's constraints, fewer instances), or drain with --force: "
          "its instances then keep running there until room appears.",
          host, b->drainBlocked);
      return stg_cli_fail (cli, refused);
    }
  g_autoptr (ApiResponse) r = c && (before || !drain || o->force)
                                  ? stg_cli_drain_host (c, host, drain, &error)
                                  : NULL;
  g_autoptr (ApiResponse) hr = r ? stg_cli_get_hosts (c, &error) : NULL;
  if (hr == NULL)
    return stg_cli_fail (cli, error);
  if (!drain)
    {
      fprintf (cli->out, "host %s is open: new instances may be placed on it\n", host);
      return STG_EXIT_OK;
    }
  ApiFleetHostStatus *h = find_host (hr, host);
  g_autoptr (GHashTable) keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                       g_object_unref);
  g_autoptr (GHashTable) jobs = h ? instances_by_job (h, keys) : NULL;
  if (jobs == NULL || g_hash_table_size (jobs) == 0)
    {
      fprintf (cli->out, "host %s is drained and holds no instance\n", host);
      return STG_EXIT_OK;
    }
  fprintf (cli->out, "host %s is drained: nothing new is placed on it\n", host);
  if (h->drainBlocked[0] != '\0')
    fprintf (cli->out, "no room elsewhere yet, so those instances wait there, running: %s\n",
             h->drainBlocked);
  g_autoptr (GList) names = g_list_sort (g_hash_table_get_keys (jobs), (GCompareFunc) g_strcmp0);
  int worst = STG_EXIT_OK;
  for (GList *l = names; l != NULL; l = l->next)
    {
      int code = move_off (cli, c, host, g_hash_table_lookup (keys, l->data),
                           g_hash_table_lookup (jobs, l->data), o);
      worst = worst != STG_EXIT_OK ? worst : code;
    }
  return worst;
}

static int
host_drain (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autofree gchar *message = NULL;
  DrainOptions o = { .batch = 1, .watch = -1, .floor = -1 };
  const GOptionEntry entries[] = {
    { "batch-size", 0, 0, G_OPTION_ARG_INT, &o.batch,
      "Instances of a job moved at a time (default 1)", "N" },
    { "min-in-service", 0, 0, G_OPTION_ARG_INT, &o.floor,
      "Instances of each job kept running and healthy throughout (default: all but one batch)",
      "N" },
    { "watch-secs", 0, 0, G_OPTION_ARG_INT, &o.watch,
      "Seconds a moved instance must stay healthy before the next batch (default: the job's "
      "watch_secs, from its newest update; 30 if it has had none)",
      "S" },
    { "message", 'm', 0, G_OPTION_ARG_STRING, &message, "Why, recorded with each move", "TEXT" },
    { "wait", 'w', 0, G_OPTION_ARG_NONE, &o.wait, "Follow each move to its end", NULL },
    { "force", 0, 0, G_OPTION_ARG_NONE, &o.force,
      "Drain even when the other hosts lack room: instances wait, running, until room appears",
      NULL },
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("drain"), "host", entries,
                      "Drains a host for maintenance: nothing new is placed on it, then each "
                      "job's instances on it are restarted on other hosts, a batch at a time, "
                      "as a rolling update that keeps the job's floor of instances in service. "
                      "A job whose update is in progress is left (its error says so): drain "
                      "again once it ends. The host stays drained until 'host undrain'. A drain "
                      "that the other hosts have no room for (the jobs' constraints) is refused "
                      "before anything stops, saying what is short, unless --force.",
                      1, 1, &argc, &argv, &code))
    return code;
  if (o.batch < 1 || o.watch < -1 || o.floor < -1)
    return stg_cli_usage_error (cli, "--batch-size must be at least 1, the others at least 0");
  o.message = message;
  return drain_or_open (cli, argv[1], TRUE, &o);
}

static int
host_undrain (StgCli *cli, int argc, gchar **argv)
{
  int code;
  DrainOptions o = { 0 };

  if (!stg_cli_parse (cli, self ("undrain"), "host", NULL,
                      "Opens a drained host again: new instances may be placed on it. "
                      "Instances already moved stay where they are.",
                      1, 1, &argc, &argv, &code))
    return code;
  return drain_or_open (cli, argv[1], FALSE, &o);
}

const StgCliCommand stg_cli_host_commands[] = {
  { "list", "[CLUSTER]", "List the fleet's hosts (also: stagger hosts)", host_list },
  { "drain", "[CLUSTER/]HOST", "Move a host's instances off it, a batch at a time", host_drain },
  { "undrain", "[CLUSTER/]HOST", "Let new instances be placed on a drained host again",
    host_undrain },
  { "maintenance", "start|drain|sla-drain|status|end [CLUSTER/]HOST...",
    "Aurora's host maintenance: SCHEDULED, DRAINING, DRAINED, NONE", stg_cli_host_maintenance },
  { NULL, NULL, NULL, NULL },
};
