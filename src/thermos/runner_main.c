/* runner_main.c: stagger-thermos, the runner of one instance of an
 * AuroraExecutor (Thermos) task: its command line, the task's JSON, the
 * values of the templates, the assigned ports; then runner.c runs the task
 * and its end is the exit status. The runner never changes user: it runs
 * the task as whoever started it. Main thread; SIGCHLD is blocked before
 * any other thread exists, for the signalfd of runner_tree.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "thermos/runner.h"

#define MAX_TASK_BYTES (16 * 1024 * 1024)

typedef struct
{
  gint task_fd;
  gchar *task_env;
  gchar *sandbox;
  gint instance;
  gchar *hostname;
  gchar *task_id;
  gchar *user;
  gchar **ports;
  gchar *shell;
  gboolean preserve_env;
  gchar *log_destination;
  gchar *log_mode;
  gint rotate_log_size_mb;
  gint rotate_log_backups;
  gint preemption_wait; /* -1: not given */
  StgRunnerAnnounce announce;
  gboolean check;
  gboolean version;
  gchar **args;
} Options;

static void
options_clear (Options *o)
{
  g_free (o->task_env);
  g_free (o->sandbox);
  g_free (o->hostname);
  g_free (o->task_id);
  g_free (o->user);
  g_strfreev (o->ports);
  g_free (o->shell);
  g_free (o->log_destination);
  g_free (o->log_mode);
  g_free (o->announce.ensemble);
  g_free (o->announce.root);
  g_free (o->announce.auth_config);
  g_free (o->announce.hostname);
  g_strfreev (o->args);
}

static GLogWriterOutput
write_log (GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer data)
{
  const gchar *message = "";
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree gchar *stamp = g_date_time_format (now, "%F %T");

  (void) data;
  if (level & G_LOG_LEVEL_DEBUG)
    return G_LOG_WRITER_HANDLED;
  for (gsize i = 0; i < n_fields; i++)
    if (g_str_equal (fields[i].key, "MESSAGE"))
      message = fields[i].value;
  fprintf (stderr, "%s stagger-thermos[%d]: %s%s\n", stamp, (int) getpid (),
           level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR) ? "warning: "
                                                                                    : "",
           message);
  fflush (stderr);
  return G_LOG_WRITER_HANDLED;
}

static gint fail (gint status, const gchar *format, ...) G_GNUC_PRINTF (2, 3);

static gint
fail (gint status, const gchar *format, ...)
{
  va_list ap;
  g_autofree gchar *text = NULL;

  va_start (ap, format);
  text = g_strdup_vprintf (format, ap);
  va_end (ap);
  fprintf (stderr, "stagger-thermos: %s\n", text);
  return status;
}

/* All of @fd, up to MAX_TASK_BYTES. */
static gchar *
read_fd (gint fd, GError **error)
{
  g_autoptr (GString) text = g_string_new (NULL);
  gchar buf[65536];

  for (;;)
    {
      gssize n = read (fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          stg_fail (error, G_IO_ERROR, g_io_error_from_errno (errno), "reading descriptor %d: %s",
                    fd, g_strerror (errno));
          return NULL;
        }
      if (n == 0)
        break;
      g_string_append_len (text, buf, n);
      if (text->len > MAX_TASK_BYTES)
        {
          stg_fail (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the task is larger than %d bytes",
                    MAX_TASK_BYTES);
          return NULL;
        }
    }
  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* The task in the environment variable @name, which goes: no process of
 * the task inherits it. */
static gchar *
read_env (const gchar *name, GError **error)
{
  gchar *text = g_strdup (g_getenv (name));

  if (text == NULL)
    stg_fail (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--task-env %s: no such variable",
              name);
  g_unsetenv (name);
  return text;
}

static gchar *
read_task (const Options *o, GError **error)
{
  const gchar *path = o->args != NULL ? o->args[0] : NULL;
  gchar *text = NULL;

  if (o->task_fd >= 0)
    return read_fd (o->task_fd, error);
  if (o->task_env != NULL)
    return read_env (o->task_env, error);
  if (g_str_equal (path, "-"))
    return read_fd (0, error);
  if (!g_file_get_contents (path, &text, NULL, error))
    return NULL;
  return text;
}

/* "NAME=PORT" (or Thermos's "NAME:PORT") into @ports. */
static gboolean
parse_ports (gchar **specs, GHashTable *ports, GError **error)
{
  for (guint i = 0; specs != NULL && specs[i] != NULL; i++)
    {
      const gchar *sep = strpbrk (specs[i], "=:");
      guint64 port = 0;
      if (sep == NULL || sep == specs[i] ||
          !g_ascii_string_to_unsigned (sep + 1, 10, 1, 65535, &port, NULL))
        return stg_fail (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                         "--port %s: give NAME=PORT, with PORT from 1 to 65535", specs[i]);
      g_hash_table_insert (ports, g_strndup (specs[i], (gsize) (sep - specs[i])),
                           GINT_TO_POINTER ((gint) port));
    }
  return TRUE;
}

static gboolean
parse_options (Options *o, int *argc, char ***argv, GError **error)
{
  const GOptionEntry entries[] = {
    { "task-fd", 0, 0, G_OPTION_ARG_INT, &o->task_fd, "Read the task's JSON from descriptor FD",
      "FD" },
    { "task-env", 0, 0, G_OPTION_ARG_STRING, &o->task_env,
      "Read the task's JSON from the environment variable NAME (then unset)", "NAME" },
    { "sandbox", 0, 0, G_OPTION_ARG_FILENAME, &o->sandbox,
      "Run the task in DIR (default: the current directory)", "DIR" },
    { "instance", 0, 0, G_OPTION_ARG_INT, &o->instance, "{{mesos.instance}} (default: 0)", "N" },
    { "hostname", 0, 0, G_OPTION_ARG_STRING, &o->hostname,
      "{{mesos.hostname}} (default: this host's name)", "NAME" },
    { "task-id", 0, 0, G_OPTION_ARG_STRING, &o->task_id,
      "{{thermos.task_id}} (default: TASK-YYYYmmdd-HHMMSS.micros)", "ID" },
    { "user", 0, 0, G_OPTION_ARG_STRING, &o->user,
      "{{thermos.user}}: the user the runner already runs as (default: that user's name)", "NAME" },
    { "port", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->ports,
      "An assigned port: {{thermos.ports[NAME]}} is PORT (repeat for each)", "NAME=PORT" },
    { "shell", 0, 0, G_OPTION_ARG_FILENAME, &o->shell,
      "Run processes with PATH -c CMDLINE (default: bash, else /bin/sh)", "PATH" },
    { "preserve-env", 0, 0, G_OPTION_ARG_NONE, &o->preserve_env,
      "Processes inherit the runner's whole environment", NULL },
    { "process-logger-destination", 0, 0, G_OPTION_ARG_STRING, &o->log_destination,
      "Output of processes without a logger: file, console, both or none (default: file)",
      "WHERE" },
    { "process-logger-mode", 0, 0, G_OPTION_ARG_STRING, &o->log_mode,
      "For them: standard or rotate (default: standard)", "MODE" },
    { "rotate-log-size-mb", 0, 0, G_OPTION_ARG_INT, &o->rotate_log_size_mb,
      "For them, in rotate mode: the size of a log file (default: 100)", "MB" },
    { "rotate-log-backups", 0, 0, G_OPTION_ARG_INT, &o->rotate_log_backups,
      "For them, in rotate mode: the rolled-over files kept (default: 5)", "N" },
    { "preemption-wait", 0, 0, G_OPTION_ARG_INT, &o->preemption_wait,
      "Seconds a stop gives the processes, final ones included (0 to 60; default: 60)", "SECS" },
    { "announcer-ensemble", 0, 0, G_OPTION_ARG_STRING, &o->announce.ensemble,
      "Announce a task with an announce section in this ZooKeeper ensemble once the runner "
      "gets SIGUSR1 (staggerd's word that the instance is healthy)",
      "HOST:PORT,..." },
    { "announcer-serverset-path", 0, 0, G_OPTION_ARG_STRING, &o->announce.root,
      "ServerSets are PATH/ROLE/ENVIRONMENT/JOB (default: /aurora)", "PATH" },
    { "announcer-allow-custom-serverset-path", 0, 0, G_OPTION_ARG_NONE, &o->announce.allow_custom,
      "Honour announce.zk_path (else such a task is refused)", NULL },
    { "announcer-zookeeper-auth-config", 0, 0, G_OPTION_ARG_FILENAME, &o->announce.auth_config,
      "Aurora's ZooKeeper auth file: credentials and the ACL of the nodes made", "FILE" },
    { "announcer-hostname", 0, 0, G_OPTION_ARG_STRING, &o->announce.hostname,
      "The host the endpoints name (default: --hostname)", "NAME" },
    { "check", 0, 0, G_OPTION_ARG_NONE, &o->check,
      "Only check the task; print the ports it needs, one a line", NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, &o->version, "Print the version and exit", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->args, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("TASK.json");

  g_option_context_set_summary (
      context, "Runs one instance of an AuroraExecutor (Thermos) task: the JSON that Aurora's\n"
               "client puts in executorConfig.data, from the file TASK.json ('-': standard\n"
               "input), --task-fd or --task-env. Exit status: 0 the task succeeded, 1 it\n"
               "failed, 2 it was stopped (SIGTERM, SIGINT), 64 a wrong command line, 65 a\n"
               "wrong task or a missing port, 70 the runner could not work. See\n"
               "stagger-thermos(8).");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, argc, argv, error))
    return FALSE;
  if (o->version)
    return TRUE;
  guint nargs = o->args != NULL ? g_strv_length (o->args) : 0;
  if ((o->task_fd >= 0) + (o->task_env != NULL) + (nargs > 0) != 1 || nargs > 1)
    return stg_fail (error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                     "give the task as one TASK.json, with --task-fd or with --task-env");
  if (o->instance < 0 || o->rotate_log_size_mb < 0 || o->rotate_log_backups < 0)
    return stg_fail (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                     "--instance, --rotate-log-size-mb and --rotate-log-backups take no "
                     "negative number");
  if (o->announce.root == NULL)
    o->announce.root = g_strdup ("/aurora");
  if (o->announce.ensemble != NULL && !stg_zk_ensemble_check (o->announce.ensemble, error))
    return FALSE;
  g_autoptr (GError) bad_path = NULL;
  if (!stg_zk_path_check (o->announce.root, &bad_path))
    return stg_fail (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                     "--announcer-serverset-path: %s", bad_path->message);
  if (o->preemption_wait > STG_THERMOS_PREEMPTION_WAIT_SECS || o->preemption_wait < -1)
    return stg_fail (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                     "--preemption-wait is 0 to %d seconds (staggerd allows a stop no more)",
                     STG_THERMOS_PREEMPTION_WAIT_SECS);
  return TRUE;
}

static gboolean
log_defaults (const Options *o, StgRunnerLogDefaults *d, GError **error)
{
  *d = (StgRunnerLogDefaults){ STG_THERMOS_LOG_FILE, STG_THERMOS_LOG_STANDARD,
                               (gint64) MAX (o->rotate_log_size_mb, 0) * 1024 * 1024,
                               o->rotate_log_backups };
  if (d->rotate_log_size == 0)
    d->rotate_log_size = 100 * 1024 * 1024;
  if (d->rotate_backups == 0)
    d->rotate_backups = 5;
  if (o->log_destination != NULL &&
      !stg_thermos_log_destination_parse (o->log_destination, &d->destination))
    return stg_fail (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                     "--process-logger-destination is file, console, both or none");
  if (o->log_mode != NULL && !stg_thermos_log_mode_parse (o->log_mode, &d->mode))
    return stg_fail (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                     "--process-logger-mode is standard or rotate");
  return TRUE;
}

/* The name of the user the runner runs as; --user must be it. */
static gchar *
user_name (const gchar *given, GError **error)
{
  struct passwd *pw = getpwuid (geteuid ());

  if (pw == NULL) /* no entry (a container's user): take the word for it */
    return g_strdup (given != NULL ? given : g_get_user_name ());
  if (given != NULL && !g_str_equal (given, pw->pw_name))
    {
      stg_fail (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--user %s: the runner runs as %s and does not change user (start it as %s)", given,
                pw->pw_name, given);
      return NULL;
    }
  return g_strdup (pw->pw_name);
}

static gchar *
default_task_id (const gchar *task)
{
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree gchar *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");

  return g_strdup_printf ("%s-%s.%06d", task, stamp, g_date_time_get_microsecond (now));
}

static gchar *
default_shell (void)
{
  if (g_file_test ("/bin/bash", G_FILE_TEST_IS_EXECUTABLE))
    return g_strdup ("/bin/bash");
  gchar *bash = g_find_program_in_path ("bash");
  return bash != NULL ? bash : g_strdup ("/bin/sh");
}

static gchar *
make_sandbox (const gchar *given, GError **error)
{
  g_autofree gchar *cwd = g_get_current_dir ();
  g_autofree gchar *dir = g_canonicalize_filename (given != NULL ? given : ".", cwd);

  if (g_mkdir_with_parents (dir, 0755) != 0 || !g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      stg_fail (error, G_IO_ERROR, g_io_error_from_errno (errno), "sandbox %s: %s", dir,
                g_strerror (errno));
      return NULL;
    }
  return g_steal_pointer (&dir);
}

/* Descriptors 0, 1 and 2 open, so that no file the runner opens takes
 * their place. */
static void
keep_standard_fds (void)
{
  for (gint fd = 0; fd <= 2; fd++)
    if (fcntl (fd, F_GETFD) < 0 && open ("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) < 0)
      abort ();
}

static gint
run (Options *o)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GHashTable) assigned = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  StgRunnerLogDefaults defaults;

  if (!parse_ports (o->ports, assigned, &error) || !log_defaults (o, &defaults, &error))
    return fail (STG_RUNNER_EXIT_USAGE, "%s", error->message);
  g_autofree gchar *text = read_task (o, &error);
  if (text == NULL)
    return fail (STG_RUNNER_EXIT_USAGE, "%s", error->message);
  g_autoptr (StgThermosJob) job = stg_thermos_job_parse (text, -1, &error);
  if (job == NULL)
    return fail (STG_RUNNER_EXIT_INVALID, "invalid task: %s", error->message);
  if (o->check)
    {
      for (guint i = 0; job->ports[i] != NULL; i++)
        printf ("%s\n", job->ports[i]);
      return STG_RUNNER_EXIT_SUCCESS;
    }
  g_autoptr (GHashTable) ports = stg_thermos_job_resolve_ports (job, assigned, &error);
  if (ports == NULL)
    return fail (STG_RUNNER_EXIT_INVALID, "%s", error->message);
  g_autofree gchar *user = user_name (o->user, &error);
  if (user == NULL)
    return fail (STG_RUNNER_EXIT_USAGE, "%s", error->message);
  g_autofree gchar *sandbox = make_sandbox (o->sandbox, &error);
  if (sandbox == NULL)
    return fail (STG_RUNNER_EXIT_INTERNAL, "%s", error->message);
  g_autofree gchar *hostname = o->hostname != NULL ? g_strdup (o->hostname)
                                                   : g_strdup (g_get_host_name ());
  g_autofree gchar *task_id = o->task_id != NULL ? g_strdup (o->task_id)
                                                 : default_task_id (job->task.name);
  g_autofree gchar *shell = o->shell != NULL ? g_strdup (o->shell) : default_shell ();
  g_auto (GStrv) parent = g_get_environ ();
  g_auto (GStrv) env = stg_runner_base_environ (parent, sandbox, user, o->preserve_env);
  StgThermosVars vars = { o->instance, hostname, task_id, user, ports };
  StgRunner *runner = stg_runner_new (g_steal_pointer (&job), &vars, ports, sandbox, shell, env,
                                      &defaults, &error);
  if (runner == NULL)
    return fail (STG_RUNNER_EXIT_INVALID, "invalid task: %s", error->message);
  if (o->preemption_wait >= 0)
    runner->preemption_wait = o->preemption_wait;
  runner->announcer = stg_runner_announcer (&o->announce, runner->job, runner->ports,
                                            runner->hostname, o->instance,
                                            stg_runner_announce_changed, runner, &error);
  if (error != NULL)
    {
      stg_runner_free (runner);
      return fail (STG_RUNNER_EXIT_INVALID, "cannot announce the task: %s", error->message);
    }
  gint status = stg_runner_run (runner, &error);
  stg_runner_free (runner);
  if (error != NULL)
    return fail (status, "%s", error->message);
  return status;
}

int
main (int argc, char **argv)
{
  sigset_t chld;
  Options o = { .task_fd = -1, .preemption_wait = -1 };
  g_autoptr (GError) error = NULL;

  /* Before any thread exists, so that SIGCHLD reaches only the signalfd. */
  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  pthread_sigmask (SIG_BLOCK, &chld, NULL);
  signal (SIGPIPE, SIG_IGN);
  keep_standard_fds ();
  g_log_set_writer_func (write_log, NULL, NULL);

  if (!parse_options (&o, &argc, &argv, &error))
    {
      gint status = fail (STG_RUNNER_EXIT_USAGE, "%s (see --help)", error->message);
      options_clear (&o);
      return status;
    }
  if (o.version)
    {
      printf ("stagger-thermos %s\n", STG_VERSION);
      options_clear (&o);
      return 0;
    }
  gint status = run (&o);
  options_clear (&o);
  return status;
}
