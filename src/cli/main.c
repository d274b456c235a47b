/* main.c: stagger, the command-line client of staggerd.
 *
 * Reads the global options, picks the group (job, update) and the command,
 * and hands the rest of the command line to it. Owns the one StgCli of the
 * run. One thread: the process's main thread.
 */
#include "config.h"

#include <locale.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/output.h"
#include "cli/suggest.h"

typedef struct
{
  const gchar *name;
  const gchar *title;
  const StgCliCommand *commands;
} Group;

static const Group groups[] = {
  { "job", "Jobs", stg_cli_job_commands },
  { "update", "Updates", stg_cli_update_commands },
  { "plan", "Rollout plans (several jobs' updates in order, with gates)", stg_cli_plan_commands },
  { "task", "Tasks (an instance's runs)", stg_cli_task_commands },
  { "host", "Hosts (the fleet runtime's)", stg_cli_host_commands },
  { "sidecar", "Sidecar sets (containers beside the fleet's instances, upgraded apart)",
    stg_cli_sidecar_commands },
  { "quota", "Quotas (a role's resources for production jobs)", stg_cli_quota_commands },
  { "tier", "Tiers (what a job's \"tier\" may name)", stg_cli_tier_commands },
  { "cluster", "The cluster (its replicas and who leads)", stg_cli_cluster_commands },
  { "admin", "Operators' calls (backups and recovery; a user of every role)",
    stg_cli_admin_commands },
};

static void
print_commands (StgCli *cli, const Group *g)
{
  for (const StgCliCommand *c = g->commands; c->name != NULL; c++)
    {
      g_autofree gchar *left = g_strdup_printf ("%s %s %s", g->name, c->name, c->args);
      g_autofree gchar *shown = stg_cli_styled (cli->color_out, STG_STYLE_BOLD, left);
      fprintf (cli->out, "  %s\n      %s\n", shown, c->summary);
    }
}

static void
print_help (StgCli *cli, const Group *only)
{
  fprintf (cli->out, "Usage:\n  stagger [OPTION…] %s COMMAND [ARGUMENT…]\n\n",
           only ? only->name : "GROUP");
  fputs ("Drive staggerd, the rolling update scheduler, from a terminal.\n\n", cli->out);
  for (guint i = 0; i < G_N_ELEMENTS (groups); i++)
    if (only == NULL || only == &groups[i])
      {
        fprintf (cli->out, "%s:\n", groups[i].title);
        print_commands (cli, &groups[i]);
        fputc ('\n', cli->out);
      }
  fputs ("Global options (before or after the command):\n"
         "  --url URL                    staggerd's base URL; the API is at URL/api (once\n"
         "                               per replica: the CLI finds the leader)\n"
         "  --leader-wait SECONDS        how long to look for a leading replica through\n"
         "                               a takeover (default STAGGER_LEADER_WAIT, else 10)\n"
         "  --auth-user USER[:PASSWORD]  authenticate with HTTP Basic (asks for a missing\n"
         "                               password)\n"
         "  --json                       print JSON instead of tables and text\n"
         "  -h, --help                   show help (also after any command)\n"
         "  --version                    print the version\n\n"
         "Where to connect: --url, else STAGGER_URL, else the command's cluster in\n"
         "~/.config/stagger/clusters.json or /etc/stagger/clusters.json, else\n"
         "http://127.0.0.1:8081. Credentials: --auth-user, else STAGGER_TOKEN (Bearer), else\n"
         "~/.config/stagger/credentials.json (must be private to you). STAGGER_CA_FILE\n"
         "names extra trusted CAs for https. NO_COLOR turns colour off.\n\n"
         "Exit codes: 0 done; 1 the daemon refused or failed the request; 2 bad command\n"
         "line; 3 bad job, clusters or credentials file, or a key or cluster that does not\n"
         "match; 4 daemon not reachable (or HTTP, TLS trouble); 5 credentials refused;\n"
         "6 no such job, update or plan; update wait and plan wait: 10 ROLLED_BACK,\n"
         "11 ABORTED, 12 FAILED, 13 ERROR.\n\n"
         "See stagger(1), stagger-job(5) and stagger-plan(5).\n",
         cli->out);
}

static const Group *
find_group (const gchar *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (groups); i++)
    if (strcmp (groups[i].name, name) == 0)
      return &groups[i];
  return NULL;
}

static const StgCliCommand *
find_command (const Group *g, const gchar *name)
{
  for (const StgCliCommand *c = g->commands; c->name != NULL; c++)
    if (strcmp (c->name, name) == 0)
      return c;
  return NULL;
}

static int
unknown (StgCli *cli, const gchar *what, const gchar *name, GPtrArray *known)
{
  g_ptr_array_add (known, NULL);
  const gchar *close = stg_cli_suggest (name, (const gchar *const *) known->pdata);
  if (close != NULL)
    return stg_cli_usage_error (cli, "unknown %s '%s', did you mean '%s'?", what, name, close);
  return stg_cli_usage_error (cli, "unknown %s '%s'", what, name);
}

/* Aurora's names for what Stagger calls otherwise: refused, with the way. */
static const struct
{
  const gchar *group, *name, *hint;
} aurora_names[] = {
  { "job", "killall", "use 'stagger job kill CLUSTER/ROLE/ENV/NAME': without instances it kills "
                      "every instance of the job" },
};

static const gchar *
aurora_hint (const Group *g, const gchar *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (aurora_names); i++)
    if (strcmp (aurora_names[i].group, g->name) == 0 && strcmp (aurora_names[i].name, name) == 0)
      return aurora_names[i].hint;
  return NULL;
}

static int
run (StgCli *cli, int argc, gchar **argv)
{
  g_autoptr (GOptionContext) ctx = g_option_context_new (NULL);
  g_autoptr (GError) error = NULL;
  const GOptionEntry entries[] = {
    { "url", 0, 0, G_OPTION_ARG_STRING_ARRAY, &cli->urls, NULL, NULL },
    { "leader-wait", 0, 0, G_OPTION_ARG_DOUBLE, &cli->leader_wait, NULL, NULL },
    { "auth-user", 0, 0, G_OPTION_ARG_STRING, &cli->user, NULL, NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &cli->json, NULL, NULL },
    { "help", 'h', 0, G_OPTION_ARG_NONE, &cli->help, NULL, NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, &cli->version, NULL, NULL },
    { NULL },
  };

  /* Global options stop at the group's name; the command parses the rest. */
  g_option_context_set_help_enabled (ctx, FALSE);
  g_option_context_set_strict_posix (ctx, TRUE);
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return stg_cli_usage_error (cli, "%s", error->message);
  if (cli->version)
    {
      fprintf (cli->out, "stagger %s\n", STG_VERSION);
      return STG_EXIT_OK;
    }
  if (argc < 2)
    {
      if (cli->help)
        {
          print_help (cli, NULL);
          return STG_EXIT_OK;
        }
      return stg_cli_usage_error (cli, "expected a command, such as 'stagger job list'");
    }

  /* `stagger hosts [CLUSTER]` is short for `stagger host list [CLUSTER]`,
   * `stagger tiers` for `stagger tier list`. */
  g_autoptr (GPtrArray) alias = g_ptr_array_new ();
  const gchar *listed = strcmp (argv[1], "hosts") == 0   ? "host"
                        : strcmp (argv[1], "tiers") == 0 ? "tier"
                                                         : NULL;
  if (listed != NULL)
    {
      g_ptr_array_add (alias, argv[0]);
      g_ptr_array_add (alias, (gpointer) listed);
      g_ptr_array_add (alias, (gpointer) "list");
      for (int i = 2; i < argc; i++)
        g_ptr_array_add (alias, argv[i]);
      g_ptr_array_add (alias, NULL);
      argc++;
      argv = (gchar **) alias->pdata;
    }
  const Group *group = find_group (argv[1]);
  if (group == NULL)
    {
      g_autoptr (GPtrArray) names = g_ptr_array_new ();
      for (guint i = 0; i < G_N_ELEMENTS (groups); i++)
        g_ptr_array_add (names, (gpointer) groups[i].name);
      return unknown (cli, "command", argv[1], names);
    }
  if (argc < 3 || strcmp (argv[2], "--help") == 0 || strcmp (argv[2], "-h") == 0)
    {
      if (argc >= 3 || cli->help)
        {
          print_help (cli, group);
          return STG_EXIT_OK;
        }
      return stg_cli_usage_error (cli, "expected a command after '%s'; see 'stagger %s --help'",
                                  group->name, group->name);
    }
  const StgCliCommand *command = find_command (group, argv[2]);
  const gchar *hint = command == NULL ? aurora_hint (group, argv[2]) : NULL;
  if (hint != NULL)
    return stg_cli_usage_error (cli, "'%s %s' is not a command of stagger; %s", group->name, argv[2],
                                hint);
  if (command == NULL)
    {
      g_autoptr (GPtrArray) names = g_ptr_array_new ();
      for (const StgCliCommand *c = group->commands; c->name != NULL; c++)
        g_ptr_array_add (names, (gpointer) c->name);
      g_autofree gchar *what = g_strdup_printf ("%s command", group->name);
      return unknown (cli, what, argv[2], names);
    }

  g_autofree gchar *name = g_strdup_printf ("%s %s", group->name, command->name);
  cli->command = name;
  cli->entry = command;
  int code = command->run (cli, argc - 2, argv + 2);
  cli->command = NULL;
  cli->entry = NULL;
  return code;
}

int
main (int argc, char **argv)
{
  StgCli cli = { .leader_wait = NAN };

  setlocale (LC_ALL, "");
  g_set_prgname ("stagger");
  cli.out = stdout;
  cli.err = stderr;
  cli.out_tty = isatty (STDOUT_FILENO) == 1;
  cli.color_out = stg_cli_color_wanted (STDOUT_FILENO);
  cli.color_err = stg_cli_color_wanted (STDERR_FILENO);

  int code = run (&cli, argc, argv);
  fflush (cli.out);
  g_strfreev (cli.urls);
  g_free (cli.user);
  return code;
}
