/* cli.h: what the files of the stagger CLI share.
 *
 * StgCli holds one run's global options and output streams; each command is
 * an StgCliCommand of a group (job, update) whose run() gets the arguments
 * after its name. Exit codes and the error domain that maps onto them live
 * here too. The CLI uses src/common and the generated API only, never the
 * daemon's layers. One thread: the process's main thread.
 */
#pragma once

#include <stdio.h>

#include "common/thrift_glue.h"

G_BEGIN_DECLS

/* Exit codes, as stagger(1) documents them. */
typedef enum
{
  STG_EXIT_OK = 0,
  STG_EXIT_FAILED = 1,         /* the daemon refused or failed the request */
  STG_EXIT_USAGE = 2,          /* bad command line */
  STG_EXIT_CONFIG = 3,         /* bad job, clusters or credentials file; key or cluster mismatch */
  STG_EXIT_UNREACHABLE = 4,    /* no answer, TLS or HTTP trouble, unreadable reply */
  STG_EXIT_AUTH = 5,           /* credentials refused */
  STG_EXIT_NOT_FOUND = 6,      /* no such job or update */
  STG_EXIT_ROLLED_BACK = 10,   /* update or plan wait: it ended in ROLLED_BACK */
  STG_EXIT_ABORTED = 11,       /* ... ABORTED */
  STG_EXIT_UPDATE_FAILED = 12, /* ... FAILED */
  STG_EXIT_UPDATE_ERROR = 13,  /* ... ERROR */
} StgExit;

#define STG_CLI_ERROR (stg_cli_error_quark ())
GQuark stg_cli_error_quark (void);

typedef enum
{
  STG_CLI_ERROR_FAILED,      /* exit 1 */
  STG_CLI_ERROR_USAGE,       /* exit 2 */
  STG_CLI_ERROR_CONFIG,      /* exit 3 */
  STG_CLI_ERROR_AUTH,        /* exit 5 */
  STG_CLI_ERROR_NOT_FOUND,   /* exit 6 */
} StgCliError;

typedef struct
{
  /* Global options. */
  gchar **urls; /* --url, given once or once per replica */
  gchar *user;
  gdouble leader_wait; /* --leader-wait in seconds; NAN: not given */
  gboolean json;
  gboolean help;
  gboolean version;

  /* Output: colour only on a terminal and without NO_COLOR. */
  FILE *out;
  FILE *err;
  gboolean out_tty;
  gboolean color_out;
  gboolean color_err;

  /* The command running, e.g. "job create", for messages, and its entry
   * in its group's table. */
  const gchar *command;
  const struct _StgCliCommand *entry;
} StgCli;

typedef int (*StgCliRun) (StgCli *cli, int argc, gchar **argv);

typedef struct _StgCliCommand
{
  const gchar *name;      /* "create" */
  const gchar *args;      /* "CLUSTER/ROLE/ENV/NAME CONFIG" */
  const gchar *summary;   /* one line */
  StgCliRun run;
} StgCliCommand;

/* The groups' tables, ended by an entry with a NULL name. */
extern const StgCliCommand stg_cli_job_commands[];
extern const StgCliCommand stg_cli_update_commands[];
extern const StgCliCommand stg_cli_task_commands[];
extern const StgCliCommand stg_cli_cluster_commands[];
extern const StgCliCommand stg_cli_host_commands[];
extern const StgCliCommand stg_cli_sidecar_commands[];
extern const StgCliCommand stg_cli_plan_commands[];
extern const StgCliCommand stg_cli_quota_commands[];
extern const StgCliCommand stg_cli_tier_commands[];
extern const StgCliCommand stg_cli_admin_commands[];

/* stagger host maintenance (cmd_maintenance.c), an entry of the host
 * group's table. */
int stg_cli_host_maintenance (StgCli *cli, int argc, gchar **argv);

/* ---- command-line plumbing (command.c) -------------------------------------- */

/* Parses a command's @argv (its name first) with its own @entries (may be
 * NULL) and the global options, and checks the positional count. Returns
 * TRUE to go on, with @argc and @argv left holding the command name and the
 * positionals; otherwise sets *@exit_code (0 after --help, 2 on a usage
 * error, reported on cli->err). @description is the help's closing text. */
gboolean stg_cli_parse (StgCli *cli, const StgCliCommand *command, const gchar *group,
                        const GOptionEntry *entries, const gchar *description,
                        guint min_args, guint max_args, int *argc, gchar ***argv,
                        int *exit_code);

/* The entry of @table named @name (which must be there). */
const StgCliCommand *stg_cli_find_command (const StgCliCommand *table, const gchar *name);

/* Reports @error on cli->err ("stagger: job create: ...", with a hint where
 * one helps) and returns its exit code. */
int stg_cli_fail (StgCli *cli, const GError *error);

/* Reports a usage problem and returns STG_EXIT_USAGE. */
int stg_cli_usage_error (StgCli *cli, const gchar *format, ...) G_GNUC_PRINTF (2, 3);

/* Prints a warning on cli->err. */
void stg_cli_warn (StgCli *cli, const gchar *format, ...) G_GNUC_PRINTF (2, 3);

/* Parses "[CLUSTER/]NAME" (a host, a role: @what, for the error): *@cluster
 * is NULL without one. */
gboolean stg_cli_parse_cluster_name (const gchar *text, const gchar *what, gchar **cluster,
                                     gchar **name, GError **error);

/* Parses "CLUSTER[/ROLE]" (either may be NULL when @text is NULL). */
gboolean stg_cli_parse_scope (const gchar *text, gchar **cluster, gchar **role, GError **error);

G_END_DECLS
