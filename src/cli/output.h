/* output.h: how the CLI prints: colour (only on a terminal, never with
 * NO_COLOR), aligned tables, times and durations, and JSON for --json.
 * One thread: the process's main thread.
 */
#pragma once

#include <json-glib/json-glib.h>

#include "cli/cli.h"
#include "common/ranges.h"

G_BEGIN_DECLS

typedef enum
{
  STG_STYLE_PLAIN,
  STG_STYLE_BOLD,
  STG_STYLE_GOOD,     /* green: done, healthy */
  STG_STYLE_BAD,      /* red: failed, rolled back */
  STG_STYLE_WARN,     /* yellow: paused, waiting, in progress */
  STG_STYLE_DIM,
} StgStyle;

/* TRUE when output on @fd should be coloured: a terminal, NO_COLOR unset
 * or empty, and TERM not "dumb". */
gboolean stg_cli_color_wanted (int fd);

/* @text wrapped in the escapes of @style when @color (a new string). */
gchar *stg_cli_styled (gboolean color, StgStyle style, const gchar *text);

StgStyle stg_cli_update_status_style (gint status);
StgStyle stg_cli_schedule_status_style (gint status);
StgStyle stg_cli_update_action_style (gint action);
StgStyle stg_cli_rollout_status_style (gint status);

/* One event as a line: "TIME  WHAT by USER — MESSAGE" (@user and @message
 * nullable), WHAT in @style. */
void stg_cli_print_event (StgCli *cli, gint64 ts, const gchar *what, StgStyle style,
                          const gchar *user, const gchar *message);

/* ---- tables ------------------------------------------------------------ */

typedef struct _StgTable StgTable;

/* A table with the given column headers (NULL-terminated). */
StgTable *stg_table_new (const gchar *first, ...) G_GNUC_NULL_TERMINATED;
void stg_table_free (StgTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgTable, stg_table_free)

/* Starts a row; cells then fill it left to right. */
void stg_table_row (StgTable *table);
void stg_table_cell (StgTable *table, StgStyle style, const gchar *format, ...) G_GNUC_PRINTF (3, 4);
guint stg_table_rows (StgTable *table);

/* Prints the table on cli->out, columns padded to their widest cell. */
void stg_table_print (StgTable *table, StgCli *cli);

/* ---- times --------------------------------------------------------------- */

/* Local time, "2026-11-22 12:19:07" ("-" for 0). */
gchar *stg_cli_format_time (gint64 ms);
/* "45s", "5m 12s", "3h 4m", "2d 1h". */
gchar *stg_cli_format_duration (gint64 ms);
/* "1.2 s" under a minute, else as stg_cli_format_duration. */
gchar *stg_cli_format_secs (gint64 ms);
/* Milliseconds since the epoch, now. */
gint64 stg_cli_now_ms (void);

/* ---- JSON ------------------------------------------------------------------ */

/* Prints @node on cli->out: indented, or on one line when @compact. */
void stg_cli_print_json (StgCli *cli, JsonNode *node, gboolean compact);

/* Adds "name": value members to the object being built. */
void stg_json_string (JsonBuilder *b, const gchar *name, const gchar *value);
/* "name": @node (taken). */
void stg_json_node (JsonBuilder *b, const gchar *name, JsonNode *node);

/* ---- ranges ------------------------------------------------------------------ */

/* The ids of a set<Range> as the generated code holds it. */
StgRanges *stg_cli_ranges_from_set (GHashTable *set);
/* "0-2,5", or "-" when empty. */
gchar *stg_cli_ranges_text (StgRanges *ranges);
/* Prints a getJobUpdateDiff answer's instances, one line each for add,
 * remove, update and unchanged ("update:    0-2,5"), then one per
 * instance that moves off its host ("instance 2: moves off host1
 * (limit:host=2) to host3"). */
void stg_cli_print_diff_groups (StgCli *cli, ApiGetJobUpdateDiffResult *diff);
/* Prints a rehearsal (getJobUpdateDiff's): a line per batch (its
 * instances, how many at once, its limit and predicted time; the first
 * of many, then how many more), the whole's limit and prediction, where
 * the numbers come from, and its notes; each line after @indent. */
void stg_cli_print_rehearsal (StgCli *cli, const ApiUpdateRehearsal *r, const gchar *indent);
/* What moving the diff's updated instances to @config means beyond the
 * fields (common/task_lines.h), one line each; NULL when nothing. */
gchar *stg_cli_change_notes (ApiGetJobUpdateDiffResult *diff, ApiTaskConfig *config);

/* "conditions: Progressing=True (RollingBack), Complete=False ..." of
 * @conditions (ApiCondition*; nothing when there are none), after
 * @label. */
void stg_cli_print_conditions (StgCli *cli, const gchar *label, GPtrArray *conditions);

G_END_DECLS
