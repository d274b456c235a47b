/* main.c: staggerd's entry point: options, config file, signals, main loop.
 *
 * Settings come from defaults (the helper programs beside staggerd's own
 * binary when they are there, as in a build tree), then the --config file,
 * then the command line. SIGTERM and SIGINT end the main loop; the daemon then stops
 * accepting, closes its connections and closes the database.
 */
#include "config.h"

#include <glib-unix.h>
#include <locale.h>
#include <string.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

#include "api/auth.h"
#include "daemon/daemon.h"
#include "daemon/systemd.h"

static gboolean
on_signal (gpointer user_data)
{
  GMainLoop *loop = user_data;

  g_message ("staggerd: shutting down");
  g_main_loop_quit (loop);
  return G_SOURCE_CONTINUE;
}

/* One line of standard input, not echoed when it is a terminal. NULL at
 * end of input. */
static gchar *
read_secret (const gchar *prompt)
{
  struct termios saved, quiet;
  gboolean tty = isatty (STDIN_FILENO) && tcgetattr (STDIN_FILENO, &saved) == 0;
  g_autoptr (GIOChannel) in = g_io_channel_unix_new (STDIN_FILENO);
  gchar *line = NULL;

  if (tty)
    {
      /* Echo goes off first (keeping what was typed ahead), then the prompt. */
      quiet = saved;
      quiet.c_lflag &= (tcflag_t) ~ECHO;
      tcsetattr (STDIN_FILENO, TCSANOW, &quiet);
      g_printerr ("%s: ", prompt);
    }
  if (g_io_channel_read_line (in, &line, NULL, NULL, NULL) != G_IO_STATUS_NORMAL)
    g_clear_pointer (&line, g_free);
  if (tty)
    {
      tcsetattr (STDIN_FILENO, TCSANOW, &saved);
      g_printerr ("\n");
    }
  if (line != NULL)
    g_strchomp (line);
  return line;
}

/* --hash-password and --hash-token: one secret from standard input, made
 * into what [users] holds. */
static int
print_hash (gboolean token)
{
  const gchar *option = token ? "--hash-token" : "--hash-password";
  g_autofree gchar *line = read_secret (token ? "Token" : "Password");
  g_autoptr (GError) error = NULL;

  if (line == NULL)
    {
      g_printerr ("staggerd: %s: nothing on standard input\n", option);
      return 2;
    }
  g_autofree gchar *hash = token ? stg_auth_hash_token (line, &error)
                                 : stg_auth_hash_password (line, &error);
  explicit_bzero (line, strlen (line));
  if (hash == NULL)
    {
      g_printerr ("staggerd: %s: %s\n", option, error->message);
      return 2;
    }
  g_print ("%s\n", hash);
  return 0;
}

/* What the command line says; NULL and -1 mean "not given". */
typedef struct
{
  gchar *config, *data_dir, *bind, *cluster, *ready_file, *webui_dir, *port_range;
  gchar *runtime, *tls_cert, *tls_key, *store, *advertise_url, *instance_user, *tier_config;
  gchar *thermos_runner, *thermos_bundle, *anchor;
  gint lease_ms;
  gboolean hash_password, hash_token, version, verbose, allow_root_instances;
  gint http_port, thrift_port;
  gint64 max_frame;
} Options;

static void
options_clear (Options *o)
{
  g_free (o->config), g_free (o->data_dir), g_free (o->bind), g_free (o->cluster);
  g_free (o->ready_file), g_free (o->webui_dir), g_free (o->port_range), g_free (o->runtime);
  g_free (o->tls_cert), g_free (o->tls_key), g_free (o->store), g_free (o->advertise_url);
  g_free (o->instance_user), g_free (o->tier_config), g_free (o->thermos_runner);
  g_free (o->thermos_bundle);
  g_free (o->anchor);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Options, options_clear)

/* Parses the command line into @o; FALSE (with @error) on a bad one. */
static gboolean
parse_options (Options *o, int *argc, char ***argv, GError **error)
{
  const GOptionEntry entries[] = {
    { "config", 'c', 0, G_OPTION_ARG_FILENAME, &o->config,
      "Read settings from the [staggerd] group of FILE (default: none)", "FILE" },
    { "data-dir", 'd', 0, G_OPTION_ARG_FILENAME, &o->data_dir,
      "Keep the database and sandboxes in DIR (default: $STATE_DIRECTORY, else " STG_DATA_DIR ")",
      "DIR" },
    { "store", 0, 0, G_OPTION_ARG_STRING, &o->store,
      "Keep jobs and updates in PostgreSQL at URL (postgresql://USER@HOST:PORT/DB or a libpq "
      "conninfo; the password comes from PGPASSWORD or PGPASSFILE, never the URL) instead of "
      "SQLite in the data directory",
      "URL" },
    { "advertise-url", 0, 0, G_OPTION_ARG_STRING, &o->advertise_url,
      "With --store: the URL other replicas send clients to while this one leads "
      "(default: http://BIND:HTTP_PORT)",
      "URL" },
    { "lease-ms", 0, 0, G_OPTION_ARG_INT, &o->lease_ms,
      "With --store: a leader silent for MS loses the lead to another replica, and a leader "
      "that cannot reach the database for about MS/4 steps down (default: 5000)",
      "MS" },
    { "bind", 'b', 0, G_OPTION_ARG_STRING, &o->bind,
      "Listen on this IP address (default: 127.0.0.1)", "ADDR" },
    { "http-port", 0, 0, G_OPTION_ARG_INT, &o->http_port,
      "Serve HTTP (the web UI, /health) on PORT; 0 picks a free port (default: 8081)", "PORT" },
    { "thrift-port", 0, 0, G_OPTION_ARG_INT, &o->thrift_port,
      "Serve framed binary Thrift on PORT; 0 picks a free port (default: 8082)", "PORT" },
    { "cluster", 0, 0, G_OPTION_ARG_STRING, &o->cluster, "Name this cluster (default: local)",
      "NAME" },
    { "max-frame-size", 0, 0, G_OPTION_ARG_INT64, &o->max_frame,
      "Close Thrift connections that send a frame over BYTES (default: 16777216)", "BYTES" },
    { "ready-file", 0, 0, G_OPTION_ARG_FILENAME, &o->ready_file,
      "Once serving, write the pid and bound ports to FILE as JSON", "FILE" },
    { "port-range", 0, 0, G_OPTION_ARG_STRING, &o->port_range,
      "Give instances' named ports from MIN-MAX (default: 20000-29999)", "MIN-MAX" },
    { "runtime", 0, 0, G_OPTION_ARG_STRING, &o->runtime,
      "Run instances with NAME: local (processes on this host, the default), simulated "
      "(no processes: instances are healthy at once; for benchmarks) or fleet (containers on "
      "the hosts of the config file's [host NAME] groups, through Docker or Podman)",
      "NAME" },
    { "instance-user", 0, 0, G_OPTION_ARG_STRING, &o->instance_user,
      "As root: run the instances of roles without a [roles] user as USER (default: nobody)",
      "USER" },
    { "allow-root-instances", 0, 0, G_OPTION_ARG_NONE, &o->allow_root_instances,
      "As root: let instances run as root (without it, staggerd refuses to start them so)", NULL },
    { "tier-config", 0, 0, G_OPTION_ARG_FILENAME, &o->tier_config,
      "Take the task tiers from FILE, in the form of Aurora's tiers.json (default: Aurora's "
      "tiers: preferred, preemptible (the default) and revocable)",
      "FILE" },
    { "thermos-runner", 0, 0, G_OPTION_ARG_FILENAME, &o->thermos_runner,
      "Run AuroraExecutor (Thermos) tasks with the stagger-thermos at PATH (default: the one "
      "beside staggerd's own binary, else the one installed in $libexecdir/stagger/)",
      "PATH" },
    { "thermos-bundle", 0, 0, G_OPTION_ARG_FILENAME, &o->thermos_bundle,
      "With --runtime=fleet: the folder, on every host, of stagger-thermos as containers run it "
      "(default: thermos-bundle beside staggerd's own binary, else "
      "$libexecdir/stagger/thermos-bundle)",
      "DIR" },
    { "anchor", 0, 0, G_OPTION_ARG_FILENAME, &o->anchor,
      "With --runtime=fleet: the stagger-anchor that staggerd imports into each host as the "
      "anchor of its pods (default: the one beside staggerd's own binary, else "
      "$libexecdir/stagger/stagger-anchor)",
      "PATH" },
    { "tls-cert", 0, 0, G_OPTION_ARG_FILENAME, &o->tls_cert,
      "Serve HTTPS with this PEM certificate (with --tls-key)", "FILE" },
    { "tls-key", 0, 0, G_OPTION_ARG_FILENAME, &o->tls_key, "The PEM private key of --tls-cert",
      "FILE" },
    { "hash-password", 0, 0, G_OPTION_ARG_NONE, &o->hash_password,
      "Read a password on standard input (not echoed), print its hash for [users], and exit",
      NULL },
    { "hash-token", 0, 0, G_OPTION_ARG_NONE, &o->hash_token,
      "Read a Bearer token on standard input (not echoed), print its digest for [users], and exit",
      NULL },
    { "webui-dir", 0, 0, G_OPTION_ARG_FILENAME, &o->webui_dir,
      "Serve the web UI's files from DIR instead of the copies built in (for development)", "DIR" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose, "Log debug messages", NULL },
    { "version", 'V', 0, G_OPTION_ARG_NONE, &o->version, "Print the version and exit", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("- the Stagger rolling update scheduler");

  *o = (Options){ .http_port = -1, .thrift_port = -1, .max_frame = -1, .lease_ms = -1 };
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_description (context,
      "staggerd keeps jobs and their rolling updates in SQLite (or PostgreSQL), runs their instances as\n"
      "processes on this host, and serves Apache Aurora's Thrift API over TCP (framed,\n"
      "binary) and a web UI over HTTP. See staggerd(8).");
  if (!g_option_context_parse (context, argc, argv, error))
    return FALSE;
  if (*argc > 1)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "unexpected argument '%s'",
                   (*argv)[1]);
      return FALSE;
    }
  return TRUE;
}

/* @name in the folder of the running binary, or in the parent of that
 * folder when it is libtool's `.libs`; NULL when it is in neither. */
static gchar *
beside_self (const gchar *name, GFileTest test)
{
  g_autofree gchar *exe = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree gchar *dir = exe ? g_path_get_dirname (exe) : NULL;
  g_autofree gchar *base = dir ? g_path_get_basename (dir) : NULL;
  g_autofree gchar *here = dir ? g_build_filename (dir, name, NULL) : NULL;

  if (here == NULL)
    return NULL;
  if (g_file_test (here, test))
    return g_steal_pointer (&here);
  if (!g_str_equal (base, ".libs"))
    return NULL;
  g_autofree gchar *parent = g_path_get_dirname (dir);
  g_autofree gchar *up = g_build_filename (parent, name, NULL);
  return g_file_test (up, test) ? g_steal_pointer (&up) : NULL;
}

/* The defaults of the helper programs are those beside staggerd when there
 * are any there (a build tree), else the installed ones. */
static void
find_helpers (StgDaemonSettings *settings)
{
  const struct
  {
    gchar **field;
    const gchar *name;
    GFileTest test;
  } helpers[] = {
    { &settings->thermos_runner, "stagger-thermos", G_FILE_TEST_IS_EXECUTABLE },
    { &settings->anchor, "stagger-anchor", G_FILE_TEST_IS_REGULAR },
    { &settings->thermos_bundle, "thermos-bundle", G_FILE_TEST_IS_DIR },
  };

  for (guint i = 0; i < G_N_ELEMENTS (helpers); i++)
    {
      gchar *found = beside_self (helpers[i].name, helpers[i].test);
      if (found != NULL)
        {
          g_free (*helpers[i].field);
          *helpers[i].field = found;
        }
    }
}

/* Replaces *@field with *@given when given. */
static void
take (gchar **field, gchar **given)
{
  if (*given != NULL)
    {
      g_free (*field);
      *field = g_steal_pointer (given);
    }
}

/* @settings from the defaults, the config file, then the command line. */
static gboolean
load_settings (StgDaemonSettings *settings, Options *o, GError **error)
{
  if (o->config != NULL && !stg_daemon_settings_load (settings, o->config, error))
    return FALSE;
  take (&settings->data_dir, &o->data_dir);
  take (&settings->bind, &o->bind);
  take (&settings->cluster, &o->cluster);
  take (&settings->ready_file, &o->ready_file);
  take (&settings->webui_dir, &o->webui_dir);
  take (&settings->tls_cert, &o->tls_cert);
  take (&settings->tls_key, &o->tls_key);
  take (&settings->store, &o->store);
  take (&settings->advertise_url, &o->advertise_url);
  take (&settings->instance_user, &o->instance_user);
  take (&settings->tier_config, &o->tier_config);
  take (&settings->thermos_runner, &o->thermos_runner);
  take (&settings->thermos_bundle, &o->thermos_bundle);
  take (&settings->anchor, &o->anchor);
  if (o->allow_root_instances)
    settings->allow_root_instances = TRUE;
  if (o->lease_ms != -1)
    settings->lease_ms = o->lease_ms;
  if (settings->lease_ms < 400 || settings->lease_ms > 600000)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--lease-ms must be between 400 and 600000");
      return FALSE;
    }
  if (o->port_range != NULL && !stg_daemon_settings_port_range (settings, o->port_range, error))
    {
      g_prefix_error (error, "--port-range: ");
      return FALSE;
    }
  if (o->runtime != NULL && !stg_daemon_settings_runtime (settings, o->runtime, error))
    {
      g_prefix_error (error, "--runtime: ");
      return FALSE;
    }
  if (o->http_port != -1)
    settings->http_port = o->http_port;
  if (o->thrift_port != -1)
    settings->thrift_port = o->thrift_port;
  if (o->max_frame != -1)
    settings->max_frame = o->max_frame;
  if (settings->http_port < 0 || settings->http_port > 65535 || settings->thrift_port < 0 ||
      settings->thrift_port > 65535)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "ports must be between 0 and 65535");
      return FALSE;
    }
  if (settings->max_frame < 1024 || settings->max_frame > G_MAXINT32)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--max-frame-size must be between 1024 and %d", G_MAXINT32);
      return FALSE;
    }
  return TRUE;
}

/* Runs the daemon until SIGTERM or SIGINT; the exit status. */
static int
serve (const StgDaemonSettings *settings)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  StgDaemon *daemon = stg_daemon_start (settings, &error);

  if (daemon == NULL)
    {
      g_printerr ("staggerd: %s\n", error->message);
      return 1;
    }
  guint term = g_unix_signal_add (SIGTERM, on_signal, loop);
  guint intr = g_unix_signal_add (SIGINT, on_signal, loop);
  /* Ready for systemd only once SIGTERM stops staggerd cleanly. */
  g_autoptr (GError) unnotified = NULL;
  if (!stg_systemd_notify ("READY=1", &unnotified))
    g_warning ("staggerd: cannot tell systemd it is ready: %s", unnotified->message);
  g_main_loop_run (loop);
  g_source_remove (term);
  g_source_remove (intr);
  stg_daemon_stop (daemon);
  return 0;
}

int
main (int argc, char **argv)
{
  g_auto (Options) o = { 0 };
  g_autoptr (GError) error = NULL;
  StgDaemonSettings settings;

  setlocale (LC_ALL, "");
  if (!parse_options (&o, &argc, &argv, &error))
    {
      g_printerr ("staggerd: %s\nTry 'staggerd --help'.\n", error->message);
      return 2;
    }
  if (o.version)
    {
      g_print ("staggerd %s\n", STG_VERSION);
      return 0;
    }
  if (o.hash_password || o.hash_token)
    return print_hash (o.hash_token);
  if (o.verbose)
    g_setenv ("G_MESSAGES_DEBUG", G_LOG_DOMAIN, TRUE);

  stg_daemon_settings_init (&settings);
  find_helpers (&settings);
  if (!load_settings (&settings, &o, &error))
    {
      g_printerr ("staggerd: %s\n", error->message);
      stg_daemon_settings_clear (&settings);
      return 2;
    }
  int status = serve (&settings);
  stg_daemon_settings_clear (&settings);
  return status;
}
