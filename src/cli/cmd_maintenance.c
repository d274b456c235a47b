/* cmd_maintenance.c: stagger host maintenance start|drain|sla-drain|
 * status|end, Aurora's host maintenance (aurora_admin host_maintenance
 * and its drains): the AuroraAdmin calls over one or more hosts of a
 * cluster, and each host's mode after. One thread: the process's main
 * thread.
 */
#include "config.h"

#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/output.h"
#include "common/thrift_json.h"
#include "common/enums.h"
#include "common/error.h"

/* The verbs, their calls, and what each does. */
static const struct
{
  const gchar *verb;
  const gchar *call;
  const gchar *help;
} VERBS[] = {
  { "start", "startMaintenance",
    "Puts the hosts in maintenance mode SCHEDULED: maintenance is coming; they still serve." },
  { "drain", "drainHosts",
    "Drains the hosts at once: nothing new is placed on them (DRAINING), and their instances "
    "move to other hosts (the fleet runtime) or stop until the maintenance ends (the local "
    "runtime), without waiting for any SLA; DRAINED once nothing of them runs." },
  { "sla-drain", "slaDrainHosts",
    "Drains the hosts within each job's SLA: an instance moves off only while its job's SLA "
    "holds without it (the job's own policy; else the default given here: --count, "
    "--percentage (default 95) over --duration (default 30m), or --coordinator), every one "
    "once --timeout (default 7d) has passed." },
  { "status", "maintenanceStatus", "Shows the hosts' maintenance modes." },
  { "end", "endMaintenance",
    "Ends the hosts' maintenance (NONE): instances may be placed on them again (the local "
    "runtime starts its stopped instances)." },
};

/* A duration such as 90, 30s, 30m, 2h, 7d or 1h30m, in seconds. */
static gboolean
parse_duration (const gchar *text, const gchar *what, gint64 *secs, GError **error)
{
  const gchar *p = text;
  gint64 total = 0;

  while (*p != '\0')
    {
      gchar *end = NULL;
      guint64 n = g_ascii_strtoull (p, &end, 10);
      const gchar *unit = strchr ("smhd", *end != '\0' ? *end : 's');
      gint64 factor = unit == NULL ? 0 : (const gint64[]){ 1, 60, 3600, 86400 }[unit - "smhd"];
      if (end == p || factor == 0 || n > G_MAXINT32 || total > G_MAXINT32)
        return stg_fail (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
                         "bad %s '%s': a duration such as 90, 30m, 2h, 7d or 1h30m", what, text);
      total += (gint64) n * factor;
      p = *end != '\0' ? end + 1 : end;
    }
  if (text[0] == '\0')
    return stg_fail (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE, "bad %s '': a duration", what);
  *secs = total;
  return TRUE;
}

typedef struct
{
  gdouble percentage;
  gint64 count;
  gchar *duration;
  gchar *coordinator;
  gchar *status_key;
  gchar *timeout;
} SlaOptions;

/* The default policy of an SLA drain, as the options say. */
static ApiSlaPolicy *
default_policy (const SlaOptions *o, GError **error)
{
  gint64 secs = 0;

  if (o->coordinator != NULL)
    {
      g_autoptr (ApiCoordinatorSlaPolicy) c = g_object_new (API_TYPE_COORDINATOR_SLA_POLICY,
                                                            "coordinatorUrl", o->coordinator,
                                                            "statusKey",
                                                            o->status_key ? o->status_key : "drain",
                                                            NULL);
      return g_object_new (API_TYPE_SLA_POLICY, "coordinatorSlaPolicy", c, NULL);
    }
  if (!parse_duration (o->duration ? o->duration : "30m", "--duration", &secs, error))
    return NULL;
  if (o->count >= 0)
    {
      g_autoptr (ApiCountSlaPolicy) c = g_object_new (API_TYPE_COUNT_SLA_POLICY, "count", o->count,
                                                      "durationSecs", secs, NULL);
      return g_object_new (API_TYPE_SLA_POLICY, "countSlaPolicy", c, NULL);
    }
  if (!(o->percentage >= 0 && o->percentage <= 100))
    return stg_fail (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
                     "--percentage must be from 0 to 100"),
           NULL;
  g_autoptr (ApiPercentageSlaPolicy) p = g_object_new (API_TYPE_PERCENTAGE_SLA_POLICY, "percentage",
                                                       o->percentage, "durationSecs", secs, NULL);
  return g_object_new (API_TYPE_SLA_POLICY, "percentageSlaPolicy", p, NULL);
}

/* The hosts of @argv[2..] ([CLUSTER/]HOST each, one cluster for all). */
static ApiHosts *
hosts_of (int argc, gchar **argv, gchar **cluster, GError **error)
{
  g_autoptr (ApiHosts) hosts = g_object_new (API_TYPE_HOSTS, NULL);

  for (int i = 2; i < argc; i++)
    {
      g_autofree gchar *c = NULL, *name = NULL;
      if (!stg_cli_parse_cluster_name (argv[i], "HOST", &c, &name, error))
        return NULL;
      if (c != NULL && *cluster != NULL && !g_str_equal (c, *cluster))
        return stg_fail (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
                         "the hosts name two clusters, %s and %s", *cluster, c),
               NULL;
      if (c != NULL && *cluster == NULL)
        *cluster = g_steal_pointer (&c);
      g_hash_table_add (hosts->hostNames, g_steal_pointer (&name));
    }
  return g_steal_pointer (&hosts);
}

/* Prints each host asked about with its mode; a host staggerd does not
 * know is an error. */
static int
print_statuses (StgCli *cli, StgCliClient *c, ApiHosts *hosts, ApiResponse *r)
{
  ApiResult *res = r->result;
  GHashTable *set = res->__isset_startMaintenanceResult ? res->startMaintenanceResult->statuses
                    : res->__isset_drainHostsResult     ? res->drainHostsResult->statuses
                    : res->__isset_endMaintenanceResult ? res->endMaintenanceResult->statuses
                                                        : res->maintenanceStatusResult->statuses;
  g_autoptr (GHashTable) modes = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) waits = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter it;
  gpointer key;
  int code = STG_EXIT_OK;

  g_hash_table_iter_init (&it, set);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      ApiHostStatus *h = key;
      g_hash_table_insert (modes, h->host, GINT_TO_POINTER (h->mode));
      if (h->__isset_slaWait && h->slaWait != NULL && h->slaWait[0] != '\0')
        g_hash_table_insert (waits, h->host, h->slaWait);
    }
  g_autoptr (GList) names = g_list_sort (g_hash_table_get_keys (hosts->hostNames),
                                         (GCompareFunc) g_strcmp0);
  g_autoptr (StgTable) t = stg_table_new ("HOST", "MAINTENANCE", NULL);
  for (GList *l = names; l != NULL; l = l->next)
    {
      gpointer mode = NULL;
      if (!g_hash_table_lookup_extended (modes, l->data, NULL, &mode))
        {
          stg_cli_warn (cli, "%s knows no host %s", stg_cli_client_cluster (c),
                        (const gchar *) l->data);
          code = STG_EXIT_NOT_FOUND;
          continue;
        }
      gint m = GPOINTER_TO_INT (mode);
      stg_table_row (t);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", (const gchar *) l->data);
      stg_table_cell (t, m == API_MAINTENANCE_MODE_NONE ? STG_STYLE_GOOD : STG_STYLE_WARN, "%s",
                      stg_maintenance_mode_name (m));
    }
  if (stg_table_rows (t) > 0)
    stg_table_print (t, cli);
  /* Why a drain waits: each instance its SLA holds on the host. */
  for (GList *l = names; l != NULL; l = l->next)
    {
      const gchar *wait = g_hash_table_lookup (waits, l->data);
      g_auto (GStrv) lines = wait ? g_strsplit (wait, "\n", -1) : NULL;
      for (guint i = 0; lines != NULL && lines[i] != NULL; i++)
        fprintf (cli->out, "%s: %s\n", (const gchar *) l->data, lines[i]);
    }
  return code;
}

int
stg_cli_host_maintenance (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  SlaOptions o = { .percentage = 95, .count = -1 };
  g_autofree gchar *cluster = NULL;
  const GOptionEntry entries[] = {
    { "count", 0, 0, G_OPTION_ARG_INT64, &o.count,
      "sla-drain: default policy, this many instances active", "N" },
    { "percentage", 0, 0, G_OPTION_ARG_DOUBLE, &o.percentage,
      "sla-drain: default policy, this percentage active (default 95)", "P" },
    { "duration", 0, 0, G_OPTION_ARG_STRING, &o.duration,
      "sla-drain: how long a task runs to count as active (default 30m)", "D" },
    { "coordinator", 0, 0, G_OPTION_ARG_STRING, &o.coordinator,
      "sla-drain: default policy, this coordinator decides", "URL" },
    { "status-key", 0, 0, G_OPTION_ARG_STRING, &o.status_key,
      "sla-drain: the coordinator's answer's member (default drain)", "KEY" },
    { "timeout", 0, 0, G_OPTION_ARG_STRING, &o.timeout,
      "sla-drain: drain without the SLA after this long (default 7d)", "D" },
    { NULL },
  };
  g_autoptr (GString) help = g_string_new ("Aurora's host maintenance, one verb:");
  for (guint i = 0; i < G_N_ELEMENTS (VERBS); i++)
    g_string_append_printf (help, "\n  %s: %s", VERBS[i].verb, VERBS[i].help);

  if (!stg_cli_parse (cli, cli->entry, "host", entries, help->str, 2, G_MAXINT32 - 1, &argc, &argv,
                      &code))
    return code;
  guint verb = 0;
  while (verb < G_N_ELEMENTS (VERBS) && !g_str_equal (VERBS[verb].verb, argv[1]))
    verb++;
  if (verb == G_N_ELEMENTS (VERBS))
    return stg_cli_usage_error (cli, "no verb '%s': start, drain, sla-drain, status or end",
                                argv[1]);
  gint64 timeout = 7 * 86400;
  g_autoptr (ApiSlaPolicy) policy = g_str_equal (argv[1], "sla-drain")
                                        ? default_policy (&o, &error)
                                        : g_object_new (API_TYPE_SLA_POLICY, NULL);
  g_autoptr (ApiHosts) hosts = policy ? hosts_of (argc, argv, &cluster, &error) : NULL;
  if (hosts == NULL || (o.timeout && !parse_duration (o.timeout, "--timeout", &timeout, &error)))
    return stg_cli_fail (cli, error);
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, cluster, &error);
  g_autoptr (ApiResponse) r = c ? stg_cli_maintenance (c, VERBS[verb].call, hosts, policy, timeout,
                                                       &error)
                                : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (r->result);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  return print_statuses (cli, c, hosts, r);
}
