/* command.c: the plumbing every command shares: parsing its options (its
 * own and the global ones) with a --help that GOption writes from the same
 * table, exit codes for errors, and how errors and warnings are shown.
 * One thread: the process's main thread.
 */
#include "config.h"

#include <string.h>

#include "cli/cli.h"
#include "cli/jobfile.h"
#include "cli/output.h"
#include "cli/http_client_transport.h"
#include "common/jobkey.h"
#include "common/ranges.h"

G_DEFINE_QUARK (stg-cli-error-quark, stg_cli_error)

/* The exit code for @error. */
static int
exit_code_of (const GError *error)
{
  if (error == NULL)
    return STG_EXIT_OK;
  if (error->domain == STG_CLI_ERROR)
    switch ((StgCliError) error->code)
      {
      case STG_CLI_ERROR_USAGE:
        return STG_EXIT_USAGE;
      case STG_CLI_ERROR_CONFIG:
        return STG_EXIT_CONFIG;
      case STG_CLI_ERROR_AUTH:
        return STG_EXIT_AUTH;
      case STG_CLI_ERROR_NOT_FOUND:
        return STG_EXIT_NOT_FOUND;
      case STG_CLI_ERROR_FAILED:
      default:
        return STG_EXIT_FAILED;
      }
  if (error->domain == STG_JOB_FILE_ERROR)
    return STG_EXIT_CONFIG;
  if (error->domain == STG_JOB_KEY_ERROR || error->domain == STG_RANGES_ERROR ||
      error->domain == G_OPTION_ERROR)
    return STG_EXIT_USAGE;
  if (error->domain == STG_HTTP_CLIENT_ERROR)
    switch ((StgHttpClientError) error->code)
      {
      case STG_HTTP_CLIENT_ERROR_AUTH_FAILED:
        return STG_EXIT_AUTH;
      case STG_HTTP_CLIENT_ERROR_INVALID:
        return STG_EXIT_CONFIG;
      default:
        return STG_EXIT_UNREACHABLE;
      }
  return STG_EXIT_FAILED;
}

static void
print_message (StgCli *cli, StgStyle style, const gchar *label, const gchar *text)
{
  g_autofree gchar *tag = stg_cli_styled (cli->color_err, style, label);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);

  fprintf (cli->err, "stagger: %s%s%s %s\n", cli->command ? cli->command : "",
           cli->command ? ": " : "", tag, lines[0]);
  for (guint i = 1; lines[i] != NULL; i++)
    fprintf (cli->err, "  %s\n", lines[i]);
  fflush (cli->err);
}

int
stg_cli_fail (StgCli *cli, const GError *error)
{
  print_message (cli, STG_STYLE_BAD, "error:", error->message);
  return exit_code_of (error);
}

void
stg_cli_warn (StgCli *cli, const gchar *format, ...)
{
  va_list ap;

  va_start (ap, format);
  g_autofree gchar *text = g_strdup_vprintf (format, ap);
  va_end (ap);
  print_message (cli, STG_STYLE_WARN, "warning:", text);
}

int
stg_cli_usage_error (StgCli *cli, const gchar *format, ...)
{
  va_list ap;

  va_start (ap, format);
  g_autofree gchar *text = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_autofree gchar *full = g_strdup_printf ("%s\nTry 'stagger %s%s--help'.", text,
                                            cli->command ? cli->command : "",
                                            cli->command ? " " : "");
  print_message (cli, STG_STYLE_BAD, "error:", full);
  return STG_EXIT_USAGE;
}

/* ---- parsing a command's arguments -------------------------------------------- */

static const gchar global_help[] =
    "Global options (any command): --url URL (once per replica), --leader-wait SECONDS,\n"
    "--auth-user USER[:PASSWORD], --json.\n"
    "Exit codes: 0 done, 1 the daemon refused, 2 bad command line, 3 bad file or\n"
    "mismatched key or cluster, 4 daemon not reachable, 5 credentials refused,\n"
    "6 not found; see stagger(1).";

gboolean
stg_cli_parse (StgCli *cli, const StgCliCommand *command, const gchar *group,
               const GOptionEntry *entries, const gchar *description, guint min_args,
               guint max_args, int *argc, gchar ***argv, int *exit_code)
{
  g_autofree gchar *user = NULL;
  g_auto (GStrv) urls = NULL;
  const GOptionEntry globals[] = {
    { "url", 0, 0, G_OPTION_ARG_STRING_ARRAY, &urls,
      "Base URL of staggerd, once per replica (default: STAGGER_URL, the clusters file, "
      "http://127.0.0.1:8081)",
      "URL" },
    { "leader-wait", 0, 0, G_OPTION_ARG_DOUBLE, &cli->leader_wait,
      "How long to look for a leading replica (default: STAGGER_LEADER_WAIT, else 10)", "SECONDS" },
    { "auth-user", 0, 0, G_OPTION_ARG_STRING, &user,
      "Authenticate as USER (asks for the password when it is not given)", "USER[:PASSWORD]" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &cli->json, "Print JSON instead of text", NULL },
    { "help", 'h', 0, G_OPTION_ARG_NONE, &cli->help, "Show this help", NULL },
    { NULL },
  };
  g_autofree gchar *params = g_strdup_printf ("%s %s%s%s", group, command->name,
                                              command->args[0] ? " " : "", command->args);
  g_autoptr (GOptionContext) ctx = g_option_context_new (params);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *desc = g_strdup_printf ("%s%s%s", description ? description : "",
                                            description ? "\n\n" : "", global_help);

  g_option_context_set_help_enabled (ctx, FALSE);
  g_option_context_set_summary (ctx, command->summary);
  g_option_context_set_description (ctx, desc);
  if (entries != NULL)
    g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_main_entries (ctx, globals, NULL);

  if (!g_option_context_parse (ctx, argc, argv, &error))
    {
      *exit_code = stg_cli_usage_error (cli, "%s", error->message);
      return FALSE;
    }
  /* Given again after the command: those win (--url: all of them, the
   * replicas, replace the ones before the command). */
  if (urls != NULL)
    {
      g_strfreev (cli->urls);
      cli->urls = g_steal_pointer (&urls);
    }
  if (user != NULL)
    {
      g_free (cli->user);
      cli->user = g_steal_pointer (&user);
    }
  if (cli->help)
    {
      g_autofree gchar *help = g_option_context_get_help (ctx, TRUE, NULL);
      fputs (help, cli->out);
      *exit_code = STG_EXIT_OK;
      return FALSE;
    }
  /* (*argv)[0] is the command's name; the rest are positionals. */
  guint n = (guint) *argc - 1;
  if (n < min_args || n > max_args)
    {
      *exit_code = stg_cli_usage_error (cli, "expected %s%s%s", command->args[0] ? "" : "no arguments",
                                        command->args, n > max_args ? " (too many arguments)"
                                        : " (missing arguments)");
      return FALSE;
    }
  return TRUE;
}

gboolean
stg_cli_parse_cluster_name (const gchar *text, const gchar *what, gchar **cluster, gchar **name,
                            GError **error)
{
  g_auto (GStrv) parts = g_strsplit (text, "/", -1);
  guint n = g_strv_length (parts);

  if (n < 1 || n > 2 || parts[n - 1][0] == '\0' || (n == 2 && !stg_job_key_part_valid (parts[0])))
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE, "bad '%s': expected %s or CLUSTER/%s",
                   text, what, what);
      return FALSE;
    }
  *cluster = n == 2 ? g_strdup (parts[0]) : NULL;
  *name = g_strdup (parts[n - 1]);
  return TRUE;
}

gboolean
stg_cli_parse_scope (const gchar *text, gchar **cluster, gchar **role, GError **error)
{
  *cluster = NULL;
  *role = NULL;
  if (text == NULL)
    return TRUE;
  g_auto (GStrv) parts = g_strsplit (text, "/", -1);
  guint n = g_strv_length (parts);
  if (n < 1 || n > 2 || !stg_job_key_part_valid (parts[0]) ||
      (n == 2 && !stg_job_key_part_valid (parts[1])))
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
                   "bad '%s': expected CLUSTER or CLUSTER/ROLE", text);
      return FALSE;
    }
  *cluster = g_strdup (parts[0]);
  *role = n == 2 ? g_strdup (parts[1]) : NULL;
  return TRUE;
}

const StgCliCommand *
stg_cli_find_command (const StgCliCommand *table, const gchar *name)
{
  for (const StgCliCommand *c = table; c->name != NULL; c++)
    if (g_str_equal (c->name, name))
      return c;
  g_assert_not_reached ();
}
