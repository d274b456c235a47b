/* cmd_cluster.c: stagger cluster status: the replicas of a cluster, who
 * leads and since when, and the store they share (staggerd's /cluster,
 * which every replica serves, leader or not). One thread: the process's
 * main thread.
 */
#include "config.h"

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/output.h"

static const gchar *
text_of (JsonObject *o, const gchar *name)
{
  return json_object_get_string_member_with_default (o, name, "");
}

static StgStyle
role_style (const gchar *role)
{
  return g_str_equal (role, "leader") || g_str_equal (role, "single") ? STG_STYLE_GOOD
         : g_str_equal (role, "gone")                                 ? STG_STYLE_BAD
                                                                      : STG_STYLE_PLAIN;
}

/* The leader's ServerSet in ZooKeeper, when staggerd announces it there. */
static void
print_zookeeper (StgCli *cli, JsonObject *o)
{
  JsonNode *n = json_object_get_member (o, "zookeeper");
  JsonObject *zk = n != NULL && JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;

  if (zk == NULL)
    return;
  fprintf (cli->out, "zk       %s", text_of (zk, "ensemble"));
  if (json_object_has_member (zk, "scheduler_path"))
    {
      const gchar *member = text_of (zk, "member"), *problem = text_of (zk, "problem");
      fprintf (cli->out, ", leader at %s: %s%s%s", text_of (zk, "scheduler_path"),
               member[0] ? member : "not announced", problem[0] ? "; " : "", problem);
    }
  fprintf (cli->out, "\n");
}

static void
print_status (StgCli *cli, JsonObject *o)
{
  JsonObject *leader = json_object_get_object_member (o, "leader");
  JsonArray *replicas = json_object_get_array_member (o, "replicas");
  gint64 now = json_object_get_int_member_with_default (o, "now_ms", stg_cli_now_ms ());
  gint64 since = json_object_get_int_member_with_default (leader, "since_ms", 0);
  g_autofree gchar *since_text = stg_cli_format_time (since);
  g_autofree gchar *ago = stg_cli_format_duration (now - since);

  fprintf (cli->out, "cluster  %s\nstore    %s\n", text_of (o, "cluster"), text_of (o, "store"));
  print_zookeeper (cli, o);
  if (text_of (leader, "url")[0] == '\0')
    fprintf (cli->out, "leader   none yet\n\n");
  else if (json_object_get_boolean_member_with_default (leader, "gone", FALSE))
    fprintf (cli->out,
             "leader   none: %s at %s (epoch %" G_GINT64_FORMAT ") is gone; an election "
             "is under way\n\n",
             text_of (leader, "holder"), text_of (leader, "url"),
             json_object_get_int_member_with_default (leader, "epoch", 0));
  else
    fprintf (cli->out, "leader   %s at %s, epoch %" G_GINT64_FORMAT ", since %s (%s ago)\n\n",
             text_of (leader, "holder"), text_of (leader, "url"),
             json_object_get_int_member_with_default (leader, "epoch", 0), since_text, ago);

  g_autoptr (StgTable) t = stg_table_new ("REPLICA", "URL", "ROLE", "STARTED", "LAST SEEN", NULL);
  for (guint i = 0; i < json_array_get_length (replicas); i++)
    {
      JsonObject *r = json_array_get_object_element (replicas, i);
      const gchar *role = text_of (r, "role");
      g_autofree gchar *started = stg_cli_format_time (
          json_object_get_int_member_with_default (r, "started_ms", 0));
      g_autofree gchar *seen = stg_cli_format_duration (
          now - json_object_get_int_member_with_default (r, "seen_ms", now));
      stg_table_row (t);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s%s", text_of (r, "holder"),
                      json_object_get_boolean_member_with_default (r, "self", FALSE)
                          ? " (answering)"
                          : "");
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", text_of (r, "url"));
      stg_table_cell (t, role_style (role), "%s", role);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", started);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s ago", seen);
    }
  stg_table_print (t, cli);
}

static int
cluster_status (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;

  if (!stg_cli_parse (cli, stg_cli_find_command (stg_cli_cluster_commands, "status"), "cluster",
                      NULL,
                      "Shows the replicas of the cluster (each says it is alive every quarter "
                      "of its lease), which one leads, since when and under which epoch, and "
                      "the store they share. Any replica answers, leader or follower.",
                      0, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, argc > 1 ? argv[1] : NULL, &error);
  g_autoptr (JsonNode) status = c ? stg_cli_client_get_json (c, "/cluster", &error) : NULL;
  if (status == NULL)
    return stg_cli_fail (cli, error);
  JsonObject *o = json_node_get_object (status);
  if (json_object_get_object_member (o, "leader") == NULL ||
      json_object_get_array_member (o, "replicas") == NULL)
    {
      g_set_error (&error, STG_CLI_ERROR, STG_CLI_ERROR_FAILED,
                   "/cluster answered without a leader or replicas");
      return stg_cli_fail (cli, error);
    }
  if (cli->json)
    stg_cli_print_json (cli, status, FALSE);
  else
    print_status (cli, o);
  return STG_EXIT_OK;
}

const StgCliCommand stg_cli_cluster_commands[] = {
  { "status", "[CLUSTER]", "Show the replicas, which one leads and the store", cluster_status },
  { NULL, NULL, NULL, NULL },
};
