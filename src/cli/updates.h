/* updates.h: following an update from the command line, shared by the
 * commands that start one (update start, job restart, job revert). One
 * thread: the process's main thread. */
#pragma once

#include "cli/cli.h"
#include "cli/client.h"

G_BEGIN_DECLS

/* Follows the update to its end: on a terminal a progress bar, on a pipe
 * one line per event. Returns the exit code its end stands for. */
int stg_cli_update_follow (StgCli *cli, StgCliClient *c, ApiJobUpdateKey *key);

/* Says the update @key of @text started, what it changes (@diff, nullable)
 * and where to watch it. */
void stg_cli_update_announce (StgCli *cli, StgCliClient *c, const gchar *text, ApiJobUpdateKey *key,
                              ApiGetJobUpdateDiffResult *diff);

G_END_DECLS
