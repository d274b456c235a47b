/* cmd_timeline.c: stagger update timeline: where an update's time went,
 * from the daemon's /ui/api/timeline (webui_timeline.c): the time it took
 * beside its physical limit, a row per batch (what it took, its slowest
 * instance to healthy, the gap before it and what held it) and, unless
 * --by=batch, a row per instance's work with its phases drawn across the
 * terminal's width. --json prints the daemon's answer. One thread: the
 * process's main thread.
 */
#include "config.h"

#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/output.h"
#include "cli/updates.h"

#define DEFAULT_WIDTH 100
#define MIN_BAR 20
#define ROW_TEXT 46 /* an instance row's columns beside its bar */

/* The letter each phase is drawn with (timeline.h's names), and its
 * style. */
static const struct
{
  const gchar *phase;
  gchar letter;
  StgStyle style;
} LETTERS[] = {
  { "waiting", '.', STG_STYLE_DIM },         { "pending", 'p', STG_STYLE_WARN },
  { "stopping", 'k', STG_STYLE_WARN },       { "stopped", '_', STG_STYLE_DIM },
  { "starting", 's', STG_STYLE_WARN },       { "healthy", '=', STG_STYLE_GOOD },
  { "failed", '!', STG_STYLE_BAD },          { "paused", 'P', STG_STYLE_WARN },
  { "awaiting_pulse", 'W', STG_STYLE_WARN },
};

static guint
letter_of (const gchar *phase)
{
  for (guint i = 0; i < G_N_ELEMENTS (LETTERS); i++)
    if (g_strcmp0 (LETTERS[i].phase, phase) == 0)
      return i;
  return G_N_ELEMENTS (LETTERS);
}

static gint64
int_of (JsonObject *o, const gchar *name)
{
  JsonNode *n = json_object_get_member (o, name);
  return n != NULL && JSON_NODE_HOLDS_VALUE (n) ? json_node_get_int (n) : -1;
}

/* Columns to draw in: --width, else the terminal's, else $COLUMNS. */
static guint
width_of (StgCli *cli, gint wanted)
{
  struct winsize ws;
  const gchar *env = g_getenv ("COLUMNS");

  if (wanted > 0)
    return (guint) wanted;
  if (ioctl (fileno (cli->out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  if (env != NULL && g_ascii_strtoull (env, NULL, 10) > 0)
    return (guint) g_ascii_strtoull (env, NULL, 10);
  return DEFAULT_WIDTH;
}

/* @spans (objects of phase, from_ms, to_ms) drawn over @cols columns for
 * [@from, @to): each column shows the phase at its middle. */
static gchar *
bar (StgCli *cli, JsonArray *spans, gint64 from, gint64 to, guint cols)
{
  g_autofree guint *cells = g_new (guint, cols);
  GString *out = g_string_new (NULL);
  gdouble step = (gdouble) MAX (to - from, 1) / cols;

  for (guint c = 0; c < cols; c++)
    cells[c] = G_N_ELEMENTS (LETTERS);
  for (guint i = 0; spans != NULL && i < json_array_get_length (spans); i++)
    {
      JsonObject *s = json_array_get_object_element (spans, i);
      guint l = letter_of (json_object_get_string_member_with_default (s, "phase", NULL));
      gint64 a = int_of (s, "from_ms"), b = int_of (s, "to_ms");
      for (guint c = 0; c < cols; c++)
        {
          gdouble mid = (gdouble) from + (c + 0.5) * step;
          if (mid >= (gdouble) a && mid < (gdouble) b)
            cells[c] = l;
        }
    }
  for (guint c = 0; c < cols;)
    {
      guint run = 1;
      while (c + run < cols && cells[c + run] == cells[c])
        run++;
      gchar *text = cells[c] < G_N_ELEMENTS (LETTERS) ? g_strnfill (run, LETTERS[cells[c]].letter)
                                                      : g_strnfill (run, ' ');
      g_autofree gchar *styled = cells[c] < G_N_ELEMENTS (LETTERS)
                                     ? stg_cli_styled (cli->color_out, LETTERS[cells[c]].style,
                                                       text)
                                     : g_strdup (text);
      g_string_append (out, styled);
      g_free (text);
      c += run;
    }
  return g_string_free (out, FALSE);
}

/* "3" for a forward batch, "back 3" for a rollback's, "?" unrecorded. */
static gchar *
batch_name (JsonObject *o)
{
  gint64 batch = int_of (o, "batch");
  gboolean back = json_object_get_boolean_member_with_default (o, "back", FALSE);

  if (batch < 0)
    return g_strdup (back ? "back ?" : "?");
  return g_strdup_printf ("%s%" G_GINT64_FORMAT, back ? "back " : "", batch);
}

static void
print_batches (StgCli *cli, JsonArray *batches, gint64 from)
{
  g_autoptr (StgTable) t = stg_table_new ("BATCH", "BEGIN", "TOOK", "INSTANCES",
                                          "SLOWEST TO HEALTHY", "LIMIT", "WAIT BEFORE", "HELD BY",
                                          NULL);

  for (guint i = 0; i < json_array_get_length (batches); i++)
    {
      JsonObject *b = json_array_get_object_element (batches, i);
      g_autofree gchar *name = batch_name (b);
      g_autofree gchar *begin = stg_cli_format_secs (int_of (b, "from_ms") - from);
      g_autofree gchar *took = stg_cli_format_secs (int_of (b, "to_ms") - int_of (b, "from_ms"));
      g_autofree gchar *slowest = int_of (b, "slowest_ms") >= 0
                                      ? stg_cli_format_secs (int_of (b, "slowest_ms"))
                                      : NULL;
      g_autofree gchar *limit = stg_cli_format_secs (int_of (b, "limit_ms"));
      g_autofree gchar *gap = stg_cli_format_secs (int_of (b, "gap_ms"));
      const gchar *why = json_object_get_string_member_with_default (b, "gap_why", NULL);
      const gchar *held = json_object_get_string_member_with_default (b, "held_by", NULL);

      stg_table_row (t);
      stg_table_cell (t, STG_STYLE_BOLD, "%s", name);
      stg_table_cell (t, STG_STYLE_DIM, "+%s", begin);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", took);
      stg_table_cell (t, STG_STYLE_PLAIN, "%" G_GINT64_FORMAT, int_of (b, "instances"));
      if (slowest != NULL)
        stg_table_cell (t, STG_STYLE_PLAIN, "%s (instance %" G_GINT64_FORMAT ")", slowest,
                        int_of (b, "slowest"));
      else
        stg_table_cell (t, STG_STYLE_DIM, "-");
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", limit);
      stg_table_cell (t, STG_STYLE_DIM, "%s%s%s%s", gap, why ? " (" : "", why ? why : "",
                      why ? ")" : "");
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", held ? held : "-");
    }
  stg_table_print (t, cli);
}

/* A row per work: instance, batch, its phases drawn, how it ended (the
 * daemon's word: updated, rolled_back, update_failed, rollback_failed,
 * cut_short) and
 * its time to healthy; the holds first when there are any. */
static void
print_instances (StgCli *cli, JsonObject *root, gint64 from, gint64 to, guint width)
{
  JsonArray *works = json_object_get_array_member (root, "instances");
  JsonArray *holds = json_object_get_array_member (root, "holds");
  /* "INSTANCE BATCH   |" before the bar, "| OUTCOME          TO HEALTHY" after. */
  guint cols = width > ROW_TEXT + MIN_BAR ? width - ROW_TEXT : MIN_BAR;
  guint used = 0;

  fprintf (cli->out, "\n%-8s %-7s|%-*s| %-16s %s\n", "INSTANCE", "BATCH", (int) cols,
           "PHASES OVER TIME", "OUTCOME", "TO HEALTHY");
  if (holds != NULL && json_array_get_length (holds) > 0)
    {
      g_autofree gchar *drawn = bar (cli, holds, from, to, cols);
      fprintf (cli->out, "%-8s %-7s|%s|\n", "update", "", drawn);
    }
  for (guint i = 0; i < json_array_get_length (works); i++)
    {
      JsonObject *w = json_array_get_object_element (works, i);
      g_autofree gchar *name = batch_name (w);
      g_autofree gchar *drawn = bar (cli, json_object_get_array_member (w, "phases"), from, to,
                                     cols);
      const gchar *outcome = json_object_get_string_member_with_default (w, "outcome", NULL);
      g_autofree gchar *healthy = int_of (w, "healthy_ms") >= 0
                                      ? stg_cli_format_secs (int_of (w, "healthy_ms"))
                                      : g_strdup ("-");
      fprintf (cli->out, "%-8" G_GINT64_FORMAT " %-7s|%s| %-16s %s\n", int_of (w, "instance"), name,
               drawn, outcome ? outcome : "under way", healthy);
    }
  /* The key, wrapped at the width. */
  fprintf (cli->out, "\n");
  for (guint i = 0; i < G_N_ELEMENTS (LETTERS); i++)
    {
      guint len = 2 + (guint) strlen (LETTERS[i].phase);
      if (used > 0 && used + 2 + len > width)
        fprintf (cli->out, "\n"), used = 0;
      fprintf (cli->out, "%s%c %s", used > 0 ? "  " : "", LETTERS[i].letter, LETTERS[i].phase);
      used += (used > 0 ? 2 : 0) + len;
    }
  fprintf (cli->out, "\n");
}

int
stg_cli_update_timeline (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autofree gchar *id = NULL, *by = NULL;
  gint width = 0;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;
  const GOptionEntry entries[] = {
    { "id", 0, 0, G_OPTION_ARG_STRING, &id, "This update (default: the job's newest)", "ID" },
    { "by", 0, 0, G_OPTION_ARG_STRING, &by,
      "instance (default: the batches, then a row per instance) or batch (the batches only)",
      "WHAT" },
    { "width", 0, 0, G_OPTION_ARG_INT, &width,
      "Columns to draw in (default: the terminal's, else $COLUMNS, else 100)", "COLS" },
    { NULL },
  };

  if (!stg_cli_parse (cli, cli->entry, "update", entries,
                      "Shows where an update's time went: the time it took beside its physical "
                      "limit (per batch, its slowest instance's time from start to healthy plus "
                      "the watch time), each batch with what held it, and each instance's "
                      "phases (waiting, stopping, starting, healthy, failed) drawn over the "
                      "update's time. While the update runs, it shows it so far.",
                      1, 1, &argc, &argv, &code))
    return code;
  if (by != NULL && !g_str_equal (by, "instance") && !g_str_equal (by, "batch"))
    return stg_cli_usage_error (cli, "--by is 'instance' or 'batch', not '%s'", by);
  if (width < 0)
    return stg_cli_usage_error (cli, "--width must be positive");
  g_autoptr (StgCliClient) c = stg_cli_client_for_job (cli, argv[1], FALSE, &path, &error);
  g_autoptr (ApiJobUpdateKey) key = c ? stg_cli_find_update (c, path->key, id, FALSE, &error)
                                      : NULL;
  g_autofree gchar *role = key ? g_uri_escape_string (key->job->role, NULL, FALSE) : NULL;
  g_autofree gchar *env = key ? g_uri_escape_string (key->job->environment, NULL, FALSE) : NULL;
  g_autofree gchar *name = key ? g_uri_escape_string (key->job->name, NULL, FALSE) : NULL;
  g_autofree gchar *uid = key ? g_uri_escape_string (key->id, NULL, FALSE) : NULL;
  g_autofree gchar *query = key ? g_strdup_printf ("/ui/api/timeline?role=%s&environment=%s"
                                                   "&name=%s&id=%s",
                                                   role, env, name, uid)
                                : NULL;
  g_autoptr (JsonNode) root = query ? stg_cli_client_get_json (c, query, &error) : NULL;
  if (root == NULL)
    return stg_cli_fail (cli, error);
  if (cli->json)
    {
      stg_cli_print_json (cli, root, FALSE);
      return STG_EXIT_OK;
    }
  JsonObject *o = json_node_get_object (root);
  gint64 from = int_of (o, "from_ms"), to = int_of (o, "to_ms"), limit = int_of (o, "limit_ms");
  g_autofree gchar *took = stg_cli_format_secs (to - from), *lim = stg_cli_format_secs (limit),
                   *watch = stg_cli_format_secs (int_of (o, "watch_ms"));
  g_autofree gchar *job = stg_job_key_to_string (key->job);
  fprintf (cli->out, "update %s of %s/%s: %s%s\n", key->id, stg_cli_client_cluster (c), job,
           json_object_get_string_member_with_default (o, "status", "?"),
           json_object_get_boolean_member_with_default (o, "active", FALSE) ? ", so far" : "");
  if (limit > 0)
    fprintf (cli->out,
             "took %s, %.2f times its physical limit of %s\n"
             "(per batch, its slowest instance's start to healthy plus the %s watch)\n\n",
             took, (gdouble) (to - from) / (gdouble) limit, lim, watch);
  else
    fprintf (cli->out, "took %s; no instance became healthy, so no physical limit\n\n", took);
  if (int_of (o, "predicted_ms") >= 0)
    {
      g_autofree gchar *predicted = stg_cli_format_secs (int_of (o, "predicted_ms"));
      fprintf (cli->out,
               "predicted %s when it started (update start --dry-run tells it before)\n\n",
               predicted);
    }
  print_batches (cli, json_object_get_array_member (o, "batches"), from);
  if (by == NULL || g_str_equal (by, "instance"))
    print_instances (cli, o, from, to, width_of (cli, width));
  return STG_EXIT_OK;
}
