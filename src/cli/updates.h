/* updates.h: what the commands that start updates share (update start,
 * job restart, job revert): following an update (cmd_update.c), its
 * settings in words (update_settings.c), the job
 * as the daemon keeps it (job_config.c), a config as lines
 * (common/task_lines.h). One
 * thread: the process's main thread. */
#pragma once

#include "cli/cli.h"
#include "cli/client.h"
#include "common/task_lines.h"

G_BEGIN_DECLS

/* Says update @key of job @text started: on a terminal @what (nullable,
 * e.g. "restarting ..."), the update's id, what it changes (@diff,
 * nullable) and where to watch it; with --json its key unless @wait. Then
 * follows it when @wait. Returns the exit code. */
int stg_cli_update_started (StgCli *cli, StgCliClient *c, const gchar *text, const gchar *what,
                            ApiJobUpdateKey *key, ApiGetJobUpdateDiffResult *diff, gboolean wait);

/* The job's update: @id, else the active one (@active) or the newest;
 * NULL with @error (NOT_FOUND: the job has none). */
ApiJobUpdateKey *stg_cli_find_update (StgCliClient *c, ApiJobKey *job, const gchar *id,
                                      gboolean active, GError **error);

/* stagger update timeline (cmd_timeline.c). */
int stg_cli_update_timeline (StgCli *cli, int argc, gchar **argv);

/* Every setting @settings holds, a line for each group of them, as update
 * info prints them (update_settings.c). */
void stg_cli_print_update_settings (StgCli *cli, const ApiJobUpdateSettings *settings);

/* The exit code for an update (or a sidecar set's update) that ended in
 * @status: 0 for ROLLED_FORWARD, else stagger(1)'s codes 10 to 13. */
int stg_cli_update_exit_code (gint status);

/* The job @key as the daemon keeps it (its task config and instance
 * count), from getJobSummary; NULL with @error (NOT_FOUND: no such job). */
ApiJobConfiguration *stg_cli_current_job (StgCliClient *c, const ApiJobKey *key, GError **error);

/* A copy of the settings of the job @key's newest update (its watch time,
 * batch size, ...), for the commands that start an update of their own
 * the way the job updates; NULL when the job has had none or they cannot
 * be read. */
ApiJobUpdateSettings *stg_cli_newest_update_settings (StgCliClient *c, ApiJobKey *key);

/* For each group of instances @diff updates, the lines of its config that
 * @want_config changes ("- old", "+ new"), each line after @indent. */
void stg_cli_print_config_changes (StgCli *cli, ApiTaskConfig *want_config,
                                   ApiGetJobUpdateDiffResult *diff, const gchar *indent);

/* job history and job revert (cmd_history.c). */
int stg_cli_job_history (StgCli *cli, int argc, gchar **argv);
int stg_cli_job_revert (StgCli *cli, int argc, gchar **argv);

G_END_DECLS
