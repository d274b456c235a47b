/* run_launch.c: what a run's start puts together before the fork (its
 * environment, working directory and argv with templates expanded, an
 * AuroraExecutor task's runner, the listening sockets of a hot upgrade and
 * the probe socket beside the old version) and the fork itself through
 * spawn/. run.c decides when a run starts and watches it after.
 * Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/local/local_private.h"
#include "runtime/thermos_task.h"

void
stg_launch_clear (Launch *l)
{
  g_clear_pointer (&l->ports, g_hash_table_unref);
  g_clear_pointer (&l->env, g_strfreev);
  g_clear_pointer (&l->cwd, g_free);
  g_clear_pointer (&l->argv, g_ptr_array_unref);
  g_clear_pointer (&l->fds, g_array_unref);
  g_clear_pointer (&l->fd_names, g_free);
  if (l->probe_fd >= 0)
    close (l->probe_fd);
  l->probe_fd = -1;
  if (l->task_fd >= 0)
    close (l->task_fd);
  l->task_fd = -1;
}

/* A descriptor that reads @data from its start (a memfd: nothing on
 * disk), or -1 with @error. */
static gint
data_fd (const gchar *data, GError **error)
{
  gint fd = memfd_create ("stagger-task", MFD_CLOEXEC);
  gsize len = strlen (data);

  for (gsize at = 0; fd >= 0 && at < len;)
    {
      gssize n = write (fd, data + at, len - at);
      if (n < 0 && errno != EINTR)
        {
          close (fd);
          fd = -1;
        }
      at += n > 0 ? (gsize) n : 0;
    }
  if (fd < 0 || lseek (fd, 0, SEEK_SET) != 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_FAILED,
                   "cannot hand the task to stagger-thermos: %s", g_strerror (saved));
      return -1;
    }
  return fd;
}

/* An AuroraExecutor task: its runner, in the run's sandbox, with the
 * template values and ports the runtime knows, reading the task's JSON
 * from descriptor 3. */
static gboolean
launch_runner (Run *run, Launch *l, GError **error)
{
  Slot *slot = run->slot;
  const StgThermosJob *job = run->task->thermos;
  g_autoptr (GHashTable) all = stg_thermos_job_resolve_ports (job, l->ports, error);
  g_autoptr (GStrvBuilder) tail = g_strv_builder_new ();
  StgThermosRunVars tv;

  if (all == NULL)
    return FALSE;
  l->task_fd = data_fd (run->task->config->executorConfig->data, error);
  if (l->task_fd < 0)
    return FALSE;
  stg_thermos_run_vars_init (&tv, slot->base.job, slot->base.key.instance, run->id, NULL,
                             stg_local_user_name (slot), all);
  g_strv_builder_add_many (tail, "--task-fd", "3", NULL);
  run->announcer = job->announce && slot->rt->options.announcer_args != NULL;
  if (run->announcer)
    g_strv_builder_addv (tail, (const gchar **) slot->rt->options.announcer_args);
  g_auto (GStrv) tail_argv = g_strv_builder_end (tail);
  g_auto (GStrv) argv = stg_thermos_task_argv (slot->rt->options.thermos_runner, run->sandbox,
                                               &tv.vars, l->ports,
                                               (const gchar *const *) tail_argv);
  stg_thermos_run_vars_clear (&tv);
  l->cwd = g_strdup (run->sandbox);
  l->argv = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; argv[i] != NULL; i++)
    g_ptr_array_add (l->argv, g_steal_pointer (&argv[i]));
  g_ptr_array_add (l->argv, NULL);
  return TRUE;
}

/* The environment, working directory and argv, templates expanded. */
gboolean
stg_launch_argv (Run *run, Launch *l, gboolean beside, GError **error)
{
  Slot *slot = run->slot;
  const StgExecutorSpec *spec = run->spec;
  gint alt = beside && slot->run != NULL ? slot->run->version : 0;

  l->env = stg_local_environment (slot, run, alt, l->ports, run->task->port_names, &l->vars, error);
  if (l->env == NULL)
    return FALSE;
  if (run->task->thermos != NULL)
    return launch_runner (run, l, error);
  l->cwd = spec->workdir ? stg_template_expand (spec->workdir, &l->vars, NULL, error)
                         : g_strdup (run->sandbox);
  if (l->cwd == NULL)
    return FALSE;
  l->argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree gchar *exec_command = spec->command ? stg_executor_shell_command (spec) : NULL;
  if (spec->command != NULL)
    {
      g_ptr_array_add (l->argv, g_strdup ("/bin/sh"));
      g_ptr_array_add (l->argv, g_strdup ("-c"));
    }
  gchar *command[] = { exec_command, NULL };
  gchar **words = spec->command != NULL ? command : spec->argv;
  for (guint i = 0; words[i] != NULL; i++)
    {
      g_autofree gchar *word = stg_template_expand (words[i], &l->vars, NULL, error);
      if (word == NULL)
        return FALSE;
      g_ptr_array_add (l->argv, spec->command != NULL ? stg_local_resolve_command (word)
                                                      : g_steal_pointer (&word));
    }
  g_ptr_array_add (l->argv, NULL);
  return TRUE;
}

/* The slot's listening sockets for a hot upgrade, opened on first use. */
static gboolean
slot_sockets (Slot *slot, GHashTable *ports, gchar **names, GError **error)
{
  if (slot->sockets != NULL)
    return TRUE;
  slot->sockets = g_array_new (FALSE, FALSE, sizeof (gint));
  for (guint i = 0; names[i] != NULL; i++)
    {
      gint fd = stg_local_listen (slot->rt, GPOINTER_TO_INT (g_hash_table_lookup (ports, names[i])),
                                  error);
      if (fd < 0)
        {
          stg_local_close_sockets (slot);
          return FALSE;
        }
      g_array_append_val (slot->sockets, fd);
    }
  return TRUE;
}

/* The sockets handed to the process: the slot's shared ones for a hot
 * upgrade and, beside the old version, a probe socket only it holds (both
 * answer on the shared ones, so its HTTP checks go there): "probe", an
 * ephemeral port named in LISTEN_FDNAMES and STAGGER_PROBE_PORT. */
gboolean
stg_launch_sockets (Run *run, Launch *l, gboolean beside, GError **error)
{
  Slot *slot = run->slot;

  l->fds = g_array_new (FALSE, FALSE, sizeof (gint));
  if (!run->spec->hot_upgrade && !beside)
    stg_local_close_sockets (slot); /* it binds its ports itself */
  if (run->spec->hot_upgrade)
    {
      if (!slot_sockets (slot, l->ports, run->task->port_names, error))
        return FALSE;
      g_array_append_vals (l->fds, slot->sockets->data, slot->sockets->len);
      l->fd_names = g_strjoinv (":", run->task->port_names);
    }
  if (!beside)
    return TRUE;
  g_autoptr (GError) local = NULL;
  l->probe_fd = stg_local_listen (slot->rt, 0, &local);
  l->probe_port = l->probe_fd >= 0 ? stg_local_socket_port (l->probe_fd) : 0;
  if (l->probe_port == 0)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_FAILED,
                   "cannot open a probe socket: %s", local ? local->message : "no port");
      return FALSE;
    }
  g_array_append_val (l->fds, l->probe_fd);
  gchar *with_probe = g_strconcat (l->fd_names ? l->fd_names : "", ":probe", NULL);
  g_free (l->fd_names);
  l->fd_names = with_probe;
  g_autofree gchar *value = g_strdup_printf ("%d", l->probe_port);
  l->env = g_environ_setenv (l->env, "STAGGER_PROBE_PORT", value, TRUE);
  return TRUE;
}

/* Forks and execs the process, output appended to the sandbox's files. */
gboolean
stg_launch_spawn (Run *run, Launch *l, GError **error)
{
  g_autofree gchar *out = g_build_filename (run->sandbox, "stdout", NULL);
  g_autofree gchar *err = g_build_filename (run->sandbox, "stderr", NULL);
  if (l->task_fd >= 0)
    g_array_append_val (l->fds, l->task_fd); /* 3, since a runner takes no socket */
  GArray *join = stg_local_limits_join (run, error);
  if (join == NULL)
    return FALSE;
  StgSpawnRequest req = {
    .argv = (const gchar *const *) l->argv->pdata,
    .envp = (const gchar *const *) l->env,
    .cwd = l->cwd,
    .identity = stg_local_identity (run->slot),
    .group = STG_SPAWN_SESSION,
    .out = { .to = STG_SPAWN_FILE, .path = out },
    .err = { .to = STG_SPAWN_FILE, .path = err },
    .fds = (const gint *) l->fds->data,
    .n_fds = l->fds->len,
    .listen_fds = l->task_fd < 0,
    .fd_names = l->fd_names,
    .own_dir = run->sandbox,
    .join = (const gint *) join->data,
    .n_join = join->len,
  };
  StgSpawned spawned;
  gboolean ok = stg_spawn (&req, &spawned, error);
  stg_cgroup_close_procs (join);
  if (!ok)
    return FALSE;
  run->pid = spawned.pid;
  run->pid_start = spawned.start_time;
  return TRUE;
}
