/* main.c: staggerd's entry point: options, config file, signals, main loop.
 *
 * Settings come from defaults, then the --config file, then the command
 * line. SIGTERM and SIGINT end the main loop; the daemon then stops
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
      g_printerr ("%s: ", prompt);
      quiet = saved;
      quiet.c_lflag &= (tcflag_t) ~ECHO;
      tcsetattr (STDIN_FILENO, TCSAFLUSH, &quiet);
    }
  if (g_io_channel_read_line (in, &line, NULL, NULL, NULL) != G_IO_STATUS_NORMAL)
    g_clear_pointer (&line, g_free);
  if (tty)
    {
      tcsetattr (STDIN_FILENO, TCSAFLUSH, &saved);
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

int
main (int argc, char **argv)
{
  g_autofree gchar *config = NULL, *data_dir = NULL, *bind = NULL, *cluster = NULL;
  g_autofree gchar *ready_file = NULL, *webui_dir = NULL, *port_range = NULL;
  g_autofree gchar *runtime = NULL, *tls_cert = NULL, *tls_key = NULL;
  gboolean hash_password = FALSE, hash_token = FALSE;
  gint http_port = -1, thrift_port = -1;
  gint64 max_frame = -1;
  gboolean version = FALSE, verbose = FALSE;
  g_autoptr (GError) error = NULL;
  StgDaemonSettings settings;

  const GOptionEntry entries[] = {
    { "config", 'c', 0, G_OPTION_ARG_FILENAME, &config,
      "Read settings from the [staggerd] group of FILE (default: none)", "FILE" },
    { "data-dir", 'd', 0, G_OPTION_ARG_FILENAME, &data_dir,
      "Keep the database and sandboxes in DIR (default: ./var)", "DIR" },
    { "bind", 'b', 0, G_OPTION_ARG_STRING, &bind,
      "Listen on this IP address (default: 127.0.0.1)", "ADDR" },
    { "http-port", 0, 0, G_OPTION_ARG_INT, &http_port,
      "Serve HTTP (the web UI, /health) on PORT; 0 picks a free port (default: 8081)", "PORT" },
    { "thrift-port", 0, 0, G_OPTION_ARG_INT, &thrift_port,
      "Serve framed binary Thrift on PORT; 0 picks a free port (default: 8082)", "PORT" },
    { "cluster", 0, 0, G_OPTION_ARG_STRING, &cluster,
      "Name this cluster (default: local)", "NAME" },
    { "max-frame-size", 0, 0, G_OPTION_ARG_INT64, &max_frame,
      "Close Thrift connections that send a frame over BYTES (default: 16777216)", "BYTES" },
    { "ready-file", 0, 0, G_OPTION_ARG_FILENAME, &ready_file,
      "Once serving, write the pid and bound ports to FILE as JSON", "FILE" },
    { "port-range", 0, 0, G_OPTION_ARG_STRING, &port_range,
      "Give instances' named ports from MIN-MAX (default: 20000-29999)", "MIN-MAX" },
    { "runtime", 0, 0, G_OPTION_ARG_STRING, &runtime,
      "Run instances with NAME: local (processes on this host, the default), simulated "
      "(no processes: instances are healthy at once; for benchmarks) or fleet (containers on "
      "the hosts of the config file's [host NAME] groups, through Docker or Podman)", "NAME" },
    { "tls-cert", 0, 0, G_OPTION_ARG_FILENAME, &tls_cert,
      "Serve HTTPS with this PEM certificate (with --tls-key)", "FILE" },
    { "tls-key", 0, 0, G_OPTION_ARG_FILENAME, &tls_key,
      "The PEM private key of --tls-cert", "FILE" },
    { "hash-password", 0, 0, G_OPTION_ARG_NONE, &hash_password,
      "Read a password on standard input (not echoed), print its hash for [users], and exit",
      NULL },
    { "hash-token", 0, 0, G_OPTION_ARG_NONE, &hash_token,
      "Read a Bearer token on standard input (not echoed), print its digest for [users], and exit",
      NULL },
    { "webui-dir", 0, 0, G_OPTION_ARG_FILENAME, &webui_dir,
      "Serve the web UI's files from DIR instead of the copies built in (for development)", "DIR" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Log debug messages", NULL },
    { "version", 'V', 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("- the Stagger rolling update scheduler");

  setlocale (LC_ALL, "");
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_description (context,
      "staggerd keeps jobs and their rolling updates in SQLite, runs their instances as\n"
      "processes on this host, and serves Apache Aurora's Thrift API over TCP (framed,\n"
      "binary) and a web UI over HTTP. See staggerd(8).");
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("staggerd: %s\nTry 'staggerd --help'.\n", error->message);
      return 2;
    }
  if (version)
    {
      g_print ("staggerd %s\n", PACKAGE_VERSION);
      return 0;
    }
  if (hash_password || hash_token)
    return print_hash (hash_token);
  if (argc > 1)
    {
      g_printerr ("staggerd: unexpected argument '%s'\nTry 'staggerd --help'.\n", argv[1]);
      return 2;
    }
  if (verbose)
    g_setenv ("G_MESSAGES_DEBUG", G_LOG_DOMAIN, TRUE);

  stg_daemon_settings_init (&settings);
  if (config != NULL && !stg_daemon_settings_load (&settings, config, &error))
    {
      g_printerr ("staggerd: %s\n", error->message);
      stg_daemon_settings_clear (&settings);
      return 2;
    }
  if (data_dir != NULL)
    g_free (settings.data_dir), settings.data_dir = g_steal_pointer (&data_dir);
  if (bind != NULL)
    g_free (settings.bind), settings.bind = g_steal_pointer (&bind);
  if (cluster != NULL)
    g_free (settings.cluster), settings.cluster = g_steal_pointer (&cluster);
  if (ready_file != NULL)
    g_free (settings.ready_file), settings.ready_file = g_steal_pointer (&ready_file);
  if (webui_dir != NULL)
    g_free (settings.webui_dir), settings.webui_dir = g_steal_pointer (&webui_dir);
  if (port_range != NULL && !stg_daemon_settings_port_range (&settings, port_range, &error))
    {
      g_printerr ("staggerd: --port-range: %s\n", error->message);
      stg_daemon_settings_clear (&settings);
      return 2;
    }
  if (tls_cert != NULL)
    g_free (settings.tls_cert), settings.tls_cert = g_steal_pointer (&tls_cert);
  if (tls_key != NULL)
    g_free (settings.tls_key), settings.tls_key = g_steal_pointer (&tls_key);
  if (runtime != NULL && !stg_daemon_settings_runtime (&settings, runtime, &error))
    {
      g_printerr ("staggerd: --runtime: %s\n", error->message);
      stg_daemon_settings_clear (&settings);
      return 2;
    }
  if (http_port != -1)
    settings.http_port = http_port;
  if (thrift_port != -1)
    settings.thrift_port = thrift_port;
  if (max_frame != -1)
    settings.max_frame = max_frame;
  if (settings.http_port < 0 || settings.http_port > 65535 ||
      settings.thrift_port < 0 || settings.thrift_port > 65535)
    {
      g_printerr ("staggerd: ports must be between 0 and 65535\n");
      stg_daemon_settings_clear (&settings);
      return 2;
    }
  if (settings.max_frame < 1024 || settings.max_frame > G_MAXINT32)
    {
      g_printerr ("staggerd: --max-frame-size must be between 1024 and %d\n", G_MAXINT32);
      stg_daemon_settings_clear (&settings);
      return 2;
    }

  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  StgDaemon *daemon = stg_daemon_start (&settings, &error);
  stg_daemon_settings_clear (&settings);
  if (daemon == NULL)
    {
      g_printerr ("staggerd: %s\n", error->message);
      return 1;
    }
  guint term = g_unix_signal_add (SIGTERM, on_signal, loop);
  guint intr = g_unix_signal_add (SIGINT, on_signal, loop);
  g_main_loop_run (loop);
  g_source_remove (term);
  g_source_remove (intr);
  stg_daemon_stop (daemon);
  return 0;
}
