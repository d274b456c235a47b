/* output.c: colours, tables, times and JSON printing for the CLI. One
 * thread: the process's main thread. */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "cli/output.h"
#include "common/json_write.h"
#include "common/task_lines.h"

gboolean
stg_cli_color_wanted (int fd)
{
  const gchar *no_color = g_getenv ("NO_COLOR");
  const gchar *term = g_getenv ("TERM");

  if (no_color != NULL && no_color[0] != '\0')
    return FALSE;
  if (term != NULL && strcmp (term, "dumb") == 0)
    return FALSE;
  return isatty (fd) == 1;
}

gchar *
stg_cli_styled (gboolean color, StgStyle style, const gchar *text)
{
  static const gchar *const codes[] = {
    [STG_STYLE_PLAIN] = NULL, [STG_STYLE_BOLD] = "1", [STG_STYLE_GOOD] = "32",
    [STG_STYLE_BAD] = "31", [STG_STYLE_WARN] = "33", [STG_STYLE_DIM] = "2",
  };

  if (!color || codes[style] == NULL)
    return g_strdup (text);
  return g_strdup_printf ("\033[%sm%s\033[0m", codes[style], text);
}

StgStyle
stg_cli_update_status_style (gint status)
{
  switch (status)
    {
    case API_JOB_UPDATE_STATUS_ROLLED_FORWARD:
      return STG_STYLE_GOOD;
    case API_JOB_UPDATE_STATUS_ROLLED_BACK:
    case API_JOB_UPDATE_STATUS_ABORTED:
    case API_JOB_UPDATE_STATUS_ERROR:
    case API_JOB_UPDATE_STATUS_FAILED:
      return STG_STYLE_BAD;
    default:
      return STG_STYLE_WARN;
    }
}

StgStyle
stg_cli_rollout_status_style (gint status)
{
  switch (status)
    {
    case API_ROLLOUT_STATUS_DONE:
      return STG_STYLE_GOOD;
    case API_ROLLOUT_STATUS_FAILED:
    case API_ROLLOUT_STATUS_ROLLED_BACK:
    case API_ROLLOUT_STATUS_ABORTED:
      return STG_STYLE_BAD;
    case API_ROLLOUT_STATUS_PENDING:
      return STG_STYLE_DIM;
    default:
      return STG_STYLE_WARN;
    }
}

void
stg_cli_print_event (StgCli *cli, gint64 ts, const gchar *what, StgStyle style, const gchar *user,
                     const gchar *message)
{
  g_autofree gchar *when = stg_cli_format_time (ts);
  g_autofree gchar *shown = stg_cli_styled (cli->color_out, style, what);
  fprintf (cli->out, "%s  %s%s%s%s%s\n", when, shown, user ? " by " : "", user ? user : "",
           message ? " — " : "", message ? message : "");
}

StgStyle
stg_cli_schedule_status_style (gint status)
{
  switch (status)
    {
    case API_SCHEDULE_STATUS_RUNNING:
      return STG_STYLE_GOOD;
    case API_SCHEDULE_STATUS_FAILED:
    case API_SCHEDULE_STATUS_LOST:
      return STG_STYLE_BAD;
    case API_SCHEDULE_STATUS_FINISHED:
    case API_SCHEDULE_STATUS_KILLED:
      return STG_STYLE_DIM;
    default:
      return STG_STYLE_WARN;
    }
}

StgStyle
stg_cli_update_action_style (gint action)
{
  switch (action)
    {
    case API_JOB_UPDATE_ACTION_INSTANCE_UPDATED:
      return STG_STYLE_GOOD;
    case API_JOB_UPDATE_ACTION_INSTANCE_UPDATE_FAILED:
    case API_JOB_UPDATE_ACTION_INSTANCE_ROLLBACK_FAILED:
    case API_JOB_UPDATE_ACTION_INSTANCE_ROLLED_BACK:
      return STG_STYLE_BAD;
    default:
      return STG_STYLE_WARN;
    }
}

/* ---- tables ------------------------------------------------------------------ */

typedef struct
{
  gchar *text;
  StgStyle style;
} Cell;

struct _StgTable
{
  guint columns;
  GPtrArray *headers;      /* gchar* */
  GPtrArray *rows;         /* GArray of Cell */
};

static void
row_free (gpointer data)
{
  GArray *row = data;

  for (guint i = 0; i < row->len; i++)
    g_free (g_array_index (row, Cell, i).text);
  g_array_unref (row);
}

StgTable *
stg_table_new (const gchar *first, ...)
{
  StgTable *t = g_new0 (StgTable, 1);
  va_list ap;

  t->headers = g_ptr_array_new_with_free_func (g_free);
  t->rows = g_ptr_array_new_with_free_func (row_free);
  va_start (ap, first);
  for (const gchar *h = first; h != NULL; h = va_arg (ap, const gchar *))
    g_ptr_array_add (t->headers, g_strdup (h));
  va_end (ap);
  t->columns = t->headers->len;
  return t;
}

void
stg_table_free (StgTable *table)
{
  if (table == NULL)
    return;
  g_ptr_array_unref (table->headers);
  g_ptr_array_unref (table->rows);
  g_free (table);
}

void
stg_table_row (StgTable *table)
{
  g_ptr_array_add (table->rows, g_array_new (FALSE, TRUE, sizeof (Cell)));
}

void
stg_table_cell (StgTable *table, StgStyle style, const gchar *format, ...)
{
  va_list ap;
  Cell cell;

  g_return_if_fail (table->rows->len > 0);
  va_start (ap, format);
  cell.text = g_strdup_vprintf (format, ap);
  va_end (ap);
  /* One line per cell: tables stay aligned whatever a message holds. */
  g_strdelimit (cell.text, "\n\r\t", ' ');
  cell.style = style;
  g_array_append_val (table->rows->pdata[table->rows->len - 1], cell);
}

guint
stg_table_rows (StgTable *table)
{
  return table->rows->len;
}

static glong
width_of (const gchar *text)
{
  return g_utf8_validate (text, -1, NULL) ? g_utf8_strlen (text, -1) : (glong) strlen (text);
}

static void
print_cell (StgCli *cli, const gchar *text, StgStyle style, glong width, gboolean last)
{
  g_autofree gchar *shown = stg_cli_styled (cli->color_out, style, text);

  fputs (shown, cli->out);
  if (!last)
    for (glong pad = width - width_of (text) + 2; pad > 0; pad--)
      fputc (' ', cli->out);
}

void
stg_table_print (StgTable *table, StgCli *cli)
{
  g_autofree glong *widths = g_new0 (glong, table->columns);

  for (guint c = 0; c < table->columns; c++)
    widths[c] = width_of (table->headers->pdata[c]);
  for (guint r = 0; r < table->rows->len; r++)
    {
      GArray *row = table->rows->pdata[r];
      for (guint c = 0; c < row->len && c < table->columns; c++)
        widths[c] = MAX (widths[c], width_of (g_array_index (row, Cell, c).text));
    }
  for (guint c = 0; c < table->columns; c++)
    print_cell (cli, table->headers->pdata[c], STG_STYLE_BOLD, widths[c], c + 1 == table->columns);
  fputc ('\n', cli->out);
  for (guint r = 0; r < table->rows->len; r++)
    {
      GArray *row = table->rows->pdata[r];
      for (guint c = 0; c < table->columns; c++)
        {
          const Cell *cell = c < row->len ? &g_array_index (row, Cell, c) : NULL;
          print_cell (cli, cell && cell->text[0] ? cell->text : "-",
                      cell ? cell->style : STG_STYLE_PLAIN, widths[c], c + 1 == table->columns);
        }
      fputc ('\n', cli->out);
    }
}

/* ---- times ---------------------------------------------------------------------- */

gchar *
stg_cli_format_time (gint64 ms)
{
  if (ms <= 0)
    return g_strdup ("-");
  g_autoptr (GDateTime) utc = g_date_time_new_from_unix_utc (ms / 1000);
  if (utc == NULL)
    return g_strdup ("-");
  g_autoptr (GDateTime) local = g_date_time_to_local (utc);
  return g_date_time_format (local, "%Y-%m-%d %H:%M:%S");
}

gchar *
stg_cli_format_duration (gint64 ms)
{
  gint64 s = MAX (ms, 0) / 1000;

  if (s < 60)
    return g_strdup_printf ("%" G_GINT64_FORMAT "s", s);
  if (s < 3600)
    return g_strdup_printf ("%" G_GINT64_FORMAT "m %" G_GINT64_FORMAT "s", s / 60, s % 60);
  if (s < 86400)
    return g_strdup_printf ("%" G_GINT64_FORMAT "h %" G_GINT64_FORMAT "m", s / 3600, s % 3600 / 60);
  return g_strdup_printf ("%" G_GINT64_FORMAT "d %" G_GINT64_FORMAT "h", s / 86400, s % 86400 / 3600);
}

gchar *
stg_cli_format_secs (gint64 ms)
{
  if (ms < 60000)
    return g_strdup_printf ("%.1f s", (gdouble) MAX (ms, 0) / 1000.0);
  return stg_cli_format_duration (ms);
}

gint64
stg_cli_now_ms (void)
{
  return g_get_real_time () / 1000;
}

/* ---- JSON -------------------------------------------------------------------------- */

void
stg_cli_print_json (StgCli *cli, JsonNode *node, gboolean compact)
{
  g_autofree gchar *text = stg_json_write (node, !compact, NULL);
  fputs (text, cli->out);
  fputc ('\n', cli->out);
  fflush (cli->out);
}

void
stg_json_string (JsonBuilder *b, const gchar *name, const gchar *value)
{
  json_builder_set_member_name (b, name);
  if (value == NULL)
    json_builder_add_null_value (b);
  else
    json_builder_add_string_value (b, value);
}

void
stg_json_node (JsonBuilder *b, const gchar *name, JsonNode *node)
{
  json_builder_set_member_name (b, name);
  json_builder_add_value (b, node);
}

/* ---- ranges ----------------------------------------------------------------------- */

StgRanges *
stg_cli_ranges_from_set (GHashTable *set)
{
  StgRanges *ranges = stg_ranges_new ();
  GHashTableIter it;
  gpointer key;

  if (set == NULL)
    return ranges;
  g_hash_table_iter_init (&it, set);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      ApiRange *r = key;
      if (r->first >= 0 && r->first <= r->last)
        stg_ranges_add (ranges, r->first, r->last);
    }
  return ranges;
}

gchar *
stg_cli_ranges_text (StgRanges *ranges)
{
  if (ranges == NULL || stg_ranges_is_empty (ranges))
    return g_strdup ("-");
  return stg_ranges_to_string (ranges);
}

static void
print_groups (StgCli *cli, const gchar *label, StgStyle style, GHashTable *groups)
{
  g_autoptr (StgRanges) all = stg_ranges_new ();
  GHashTableIter it;
  gpointer g;

  g_hash_table_iter_init (&it, groups);
  while (g_hash_table_iter_next (&it, &g, NULL))
    {
      g_autoptr (StgRanges) r = stg_cli_ranges_from_set (((ApiConfigGroup *) g)->instances);
      for (guint i = 0; i < stg_ranges_n (r); i++)
        {
          StgRange one = stg_ranges_get (r, i);
          stg_ranges_add (all, one.first, one.last);
        }
    }
  g_autofree gchar *text = stg_cli_ranges_text (all);
  g_autofree gchar *shown = stg_cli_styled (cli->color_out, style, label);
  fprintf (cli->out, "%s %s\n", shown, text);
}

#define REHEARSAL_ROWS 20 /* batches printed before "and N more" */

void
stg_cli_print_rehearsal (StgCli *cli, const ApiUpdateRehearsal *r, const gchar *indent)
{
  guint n = r->batches->len;
  guint shown = n > REHEARSAL_ROWS + 2 ? REHEARSAL_ROWS : n;

  /* A queue's groups overlap: a group is what starts before as many as
   * its size have finished. */
  gboolean queue = g_strcmp0 (r->strategy, "queue") == 0;
  const gchar *unit = queue ? "group" : "batch";

  fprintf (cli->out, "%s%u %s%s (%s strategy), as they would run:\n", indent, n, unit,
           n == 1 ? "" : (queue ? "s" : "es"), r->strategy);
  for (guint i = 0; i < shown; i++)
    {
      const ApiRehearsalBatch *b = r->batches->pdata[i];
      g_autoptr (StgRanges) ids = stg_ranges_new ();
      for (guint j = 0; j < b->instances->len; j++)
        stg_ranges_add_one (ids, g_array_index (b->instances, gint32, j));
      g_autofree gchar *text = stg_cli_ranges_text (ids);
      g_autofree gchar *limit = stg_cli_format_secs (b->limitMs);
      g_autofree gchar *predicted = b->predictedMs >= 0 ? stg_cli_format_secs (b->predictedMs)
                                                        : g_strdup ("-");
      g_autofree gchar *at_once = queue || (guint) b->atOnce < b->instances->len
                                      ? g_strdup_printf (", up to %d at once", b->atOnce)
                                      : g_strdup ("");
      fprintf (cli->out, "%s  %s %-3u %u instance%s (%s)%s: limit %s, predicted %s\n", indent, unit,
               i + 1, b->instances->len, b->instances->len == 1 ? "" : "s", text, at_once, limit,
               predicted);
    }
  if (shown < n)
    fprintf (cli->out, "%s  ... and %u more %s%s\n", indent, n - shown, unit, queue ? "s" : "es");
  g_autofree gchar *limit = stg_cli_format_secs (r->limitMs);
  if (r->predictedMs >= 0)
    {
      g_autofree gchar *predicted = stg_cli_format_secs (r->predictedMs);
      g_autofree gchar *shown_predicted = stg_cli_styled (cli->color_out, STG_STYLE_GOOD,
                                                          predicted);
      fprintf (cli->out, "%spredicted %s; physical limit %s\n", indent, shown_predicted, limit);
    }
  else
    fprintf (cli->out, "%sno time predicted; physical limit at least %s\n", indent, limit);
  fprintf (cli->out, "%s(%s)\n", indent, r->basis);
  for (guint i = 0; i < r->notes->len; i++)
    fprintf (cli->out, "%snote: %s\n", indent, (const gchar *) r->notes->pdata[i]);
}

gchar *
stg_cli_change_notes (ApiGetJobUpdateDiffResult *diff, ApiTaskConfig *config)
{
  g_autoptr (GPtrArray) all = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter it;
  gpointer g;

  g_hash_table_iter_init (&it, diff->update);
  while (g_hash_table_iter_next (&it, &g, NULL))
    {
      g_autoptr (GPtrArray) notes = stg_task_change_notes (((ApiConfigGroup *) g)->config, config);
      for (guint i = 0; i < notes->len; i++)
        if (!g_ptr_array_find_with_equal_func (all, notes->pdata[i], g_str_equal, NULL))
          g_ptr_array_add (all, g_strdup (notes->pdata[i]));
    }
  if (all->len == 0)
    return NULL;
  g_ptr_array_add (all, NULL);
  return g_strjoinv ("\n", (gchar **) all->pdata);
}

void
stg_cli_print_conditions (StgCli *cli, const gchar *label, GPtrArray *conditions)
{
  if (conditions == NULL || conditions->len == 0)
    return;
  fputs (label, cli->out);
  for (guint i = 0; i < conditions->len; i++)
    {
      ApiCondition *c = conditions->pdata[i];
      gboolean on = g_str_equal (c->status, "True");
      StgStyle style = !on                               ? STG_STYLE_DIM
                       : g_str_equal (c->type, "Failed") ? STG_STYLE_BAD
                                                         : STG_STYLE_GOOD;
      g_autofree gchar *text = g_strdup_printf ("%s=%s", c->type, c->status);
      g_autofree gchar *shown = stg_cli_styled (cli->color_out, style, text);
      fprintf (cli->out, "%s%s (%s)", i ? ", " : "", shown, c->reason);
    }
  fputc ('\n', cli->out);
}

void
stg_cli_print_diff_groups (StgCli *cli, ApiGetJobUpdateDiffResult *diff)
{
  print_groups (cli, "add:      ", STG_STYLE_GOOD, diff->add);
  print_groups (cli, "remove:   ", STG_STYLE_BAD, diff->remove);
  print_groups (cli, "update:   ", STG_STYLE_WARN, diff->update);
  print_groups (cli, "unchanged:", STG_STYLE_DIM, diff->unchanged);
  for (guint i = 0; diff->__isset_moves && i < diff->moves->len; i++)
    {
      ApiInstanceMove *m = diff->moves->pdata[i];
      g_autofree gchar *to = m->__isset_toHost
                                 ? g_strdup_printf (" to %s", m->toHost)
                                 : g_strdup ("; no host fits now: it would wait PENDING");
      fprintf (cli->out, "instance %d: moves off %s (%s)%s\n", m->instanceId, m->host,
               m->constraint, to);
    }
}
