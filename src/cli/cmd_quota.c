/* cmd_quota.c: stagger quota get|set (Aurora's `aurora quota get` and
 * `aurora_admin set_quota`: a role's quota and what its jobs consume, by
 * pool; setting it needs a user of every role) and stagger tier list (and
 * `stagger tiers`: the tiers a job's "tier" may name, getTierConfigs).
 * One thread: the process's main thread.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/output.h"
#include "common/thrift_json.h"
#include "common/jobkey.h"

/* "[CLUSTER/]ROLE" into its parts, the role checked. */
static gboolean
parse_role (const gchar *text, gchar **cluster, gchar **role, GError **error)
{
  if (!stg_cli_parse_cluster_name (text, "ROLE", cluster, role, error))
    return FALSE;
  if (stg_job_key_part_valid (*role))
    return TRUE;
  g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
               "bad role '%s': letters, digits, '.', '_' and '-'", *role);
  return FALSE;
}

/* One row of the quota table from a ResourceAggregate (nullable). */
static void
aggregate_row (StgTable *t, const gchar *label, const ApiResourceAggregate *a)
{
  gdouble cpus = 0;
  gint64 ram = 0, disk = 0;
  GHashTableIter it;
  gpointer key;

  if (a != NULL && a->resources != NULL)
    {
      g_hash_table_iter_init (&it, a->resources);
      while (g_hash_table_iter_next (&it, &key, NULL))
        {
          const ApiResource *r = key;
          cpus += r->__isset_numCpus ? r->numCpus : 0;
          ram += r->__isset_ramMb ? r->ramMb : 0;
          disk += r->__isset_diskMb ? r->diskMb : 0;
        }
    }
  stg_table_row (t);
  stg_table_cell (t, STG_STYLE_PLAIN, "%s", label);
  stg_table_cell (t, STG_STYLE_PLAIN, "%.2f", cpus);
  stg_table_cell (t, STG_STYLE_PLAIN, "%" G_GINT64_FORMAT " MB", ram);
  stg_table_cell (t, STG_STYLE_PLAIN, "%" G_GINT64_FORMAT " MB", disk);
}

static int
quota_get (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *cluster = NULL, *role = NULL;

  if (!stg_cli_parse (cli, stg_cli_find_command (stg_cli_quota_commands, "get"), "quota", NULL,
                      "Shows the role's quota and what its jobs consume, in four pools: "
                      "production or not (the tier's), shared or dedicated (a \"dedicated\" "
                      "constraint). Only production jobs of the shared pool need quota.",
                      1, 1, &argc, &argv, &code))
    return code;
  if (!parse_role (argv[1], &cluster, &role, &error))
    return stg_cli_fail (cli, error);
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, cluster, &error);
  g_autoptr (ApiResponse) r = c ? stg_cli_get_quota (c, role, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  ApiGetQuotaResult *q = r->result->getQuotaResult;
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (q);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  g_autoptr (StgTable) t = stg_table_new ("", "CPU", "RAM", "DISK", NULL);
  aggregate_row (t, "quota (for production, shared pool)", q->quota);
  aggregate_row (t, "used: production, shared pool", q->prodSharedConsumption);
  aggregate_row (t, "used: production, dedicated pool", q->prodDedicatedConsumption);
  aggregate_row (t, "used: non-production, shared pool", q->nonProdSharedConsumption);
  aggregate_row (t, "used: non-production, dedicated pool", q->nonProdDedicatedConsumption);
  fprintf (cli->out, "role %s of cluster %s: quota and consumption\n", role,
           stg_cli_client_cluster (c));
  stg_table_print (t, cli);
  return STG_EXIT_OK;
}

/* A size in MB: a number, then nothing or MB (megabytes), GB or TB (1024
 * of the one before, as Aurora's clients count them); M, G, T too. */
static gboolean
parse_size (const gchar *text, const gchar *what, gint64 *mb, GError **error)
{
  static const struct
  {
    const gchar *suffix;
    gdouble factor;
  } units[] = { { "", 1 },      { "m", 1 },           { "mb", 1 },          { "g", 1024 },
                { "gb", 1024 }, { "t", 1024 * 1024 }, { "tb", 1024 * 1024 } };
  gchar *end = NULL;
  gdouble value = g_ascii_strtod (text, &end);

  for (guint i = 0; end != text && value >= 0 && i < G_N_ELEMENTS (units); i++)
    if (g_ascii_strcasecmp (end, units[i].suffix) == 0 && value * units[i].factor < 1e15)
      {
        *mb = (gint64) llround (value * units[i].factor);
        return TRUE;
      }
  g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
               "bad %s '%s': a size such as 512, 512MB, 4GB or 1TB (no unit: MB)", what, text);
  return FALSE;
}

static int
quota_set (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *cluster = NULL, *role = NULL;
  gint64 ram = 0, disk = 0;

  if (!stg_cli_parse (cli, stg_cli_find_command (stg_cli_quota_commands, "set"), "quota", NULL,
                      "Replaces the role's quota (as aurora_admin set_quota): CPU cores, RAM and "
                      "disk (512, 512MB, 4GB, 1TB; no unit: MB). It takes a user of every role "
                      "(roles = *), and may not be less than what the role's production jobs of "
                      "the shared pool consume now.",
                      4, 4, &argc, &argv, &code))
    return code;
  gchar *end = NULL;
  gdouble cpus = g_ascii_strtod (argv[2], &end);
  if (end == argv[2] || *end != '\0' || !(cpus >= 0 && cpus < 1e9))
    return stg_cli_usage_error (cli, "bad CPU '%s': a number of cores, such as 2 or 0.5", argv[2]);
  if (!parse_role (argv[1], &cluster, &role, &error) ||
      !parse_size (argv[3], "RAM", &ram, &error) || !parse_size (argv[4], "DISK", &disk, &error))
    return stg_cli_fail (cli, error);
  g_autoptr (ApiResourceAggregate) quota = g_object_new (API_TYPE_RESOURCE_AGGREGATE, NULL);
  g_hash_table_add (quota->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", cpus, NULL));
  g_hash_table_add (quota->resources, g_object_new (API_TYPE_RESOURCE, "ramMb", ram, NULL));
  g_hash_table_add (quota->resources, g_object_new (API_TYPE_RESOURCE, "diskMb", disk, NULL));
  quota->__isset_resources = TRUE;
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, cluster, &error);
  g_autoptr (ApiResponse) r = c ? stg_cli_set_quota (c, role, quota, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  fprintf (cli->out,
           "quota of role %s set: %.2f CPU, %" G_GINT64_FORMAT " MB RAM, %" G_GINT64_FORMAT
           " MB disk\n",
           role, cpus, ram, disk);
  return STG_EXIT_OK;
}

const StgCliCommand stg_cli_quota_commands[] = {
  { "get", "[CLUSTER/]ROLE", "Show a role's quota and what its jobs consume", quota_get },
  { "set", "[CLUSTER/]ROLE CPU RAM DISK", "Set a role's quota (a user of every role)", quota_set },
  { NULL, NULL, NULL, NULL },
};

/* ---- tiers ------------------------------------------------------------------- */

static const gchar *
setting (const ApiTierConfig *tier, const gchar *name)
{
  const gchar *value = g_hash_table_lookup (tier->settings, name);
  return value != NULL ? value : "-";
}

static gint
compare_tiers (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 ((*(ApiTierConfig *const *) a)->name, (*(ApiTierConfig *const *) b)->name);
}

static int
tier_list (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;

  if (!stg_cli_parse (cli, stg_cli_find_command (stg_cli_tier_commands, "list"), "tier", NULL,
                      "Lists the tiers a job's \"tier\" may name, and the default one. A tier "
                      "that is neither preemptible nor revocable is a production tier: its jobs "
                      "need quota (stagger quota).",
                      0, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, argc > 1 ? argv[1] : NULL, &error);
  g_autoptr (ApiResponse) r = c ? stg_cli_get_tier_configs (c, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  ApiGetTierConfigResult *tr = r->result->getTierConfigResult;
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (tr);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  g_autoptr (GPtrArray) tiers = g_ptr_array_new ();
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, tr->tiers);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (tiers, key);
  g_ptr_array_sort (tiers, compare_tiers);
  g_autoptr (StgTable) t = stg_table_new ("TIER", "PREEMPTIBLE", "REVOCABLE", "PRODUCTION", NULL);
  for (guint i = 0; i < tiers->len; i++)
    {
      const ApiTierConfig *tier = tiers->pdata[i];
      gboolean prod = g_str_equal (setting (tier, "preemptible"), "false") &&
                      g_str_equal (setting (tier, "revocable"), "false");
      stg_table_row (t);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s%s", tier->name,
                      g_strcmp0 (tier->name, tr->defaultTierName) == 0 ? " (default)" : "");
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", setting (tier, "preemptible"));
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", setting (tier, "revocable"));
      stg_table_cell (t, prod ? STG_STYLE_GOOD : STG_STYLE_PLAIN, "%s", prod ? "yes" : "no");
    }
  stg_table_print (t, cli);
  return STG_EXIT_OK;
}

const StgCliCommand stg_cli_tier_commands[] = {
  { "list", "[CLUSTER]", "List the tiers a job may name (also: stagger tiers)", tier_list },
  { NULL, NULL, NULL, NULL },
};
