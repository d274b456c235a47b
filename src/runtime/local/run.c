/* run.c: one run of an instance: starting it (sandbox, environment,
 * templates, sockets), adopting it after a restart, its health, its
 * post_update hook, stopping it, and what its end means.
 *
 * A run's life (started, healthy once its checks and any post_update pass,
 * stopped or exited) is drawn in local_private.h. Why a run was stopped
 * decides what follows its exit (StopReason). Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/local/local_private.h"
#include "runtime/thermos_task.h"
#include "spawn/process.h"

static void run_ended (Run *run, gboolean success, const gchar *how);
static void run_settle (Run *run, gboolean success, const gchar *how);
static void run_end (Run *run, gboolean success, const gchar *how);

/* ---- health and hooks ------------------------------------------------------------ */

static void on_health (gpointer data, gboolean healthy, const gchar *why);

/* What a check on the probe socket says when the new version does not
 * answer there. */
static gchar *
probe_hint (const gchar *probe_url)
{
  g_autoptr (GUri) uri = g_uri_parse (probe_url, G_URI_FLAGS_NONE, NULL);

  return g_strdup_printf ("the new version did not serve its probe socket (the descriptor named "
                          "\"probe\" in LISTEN_FDNAMES, STAGGER_PROBE_PORT=%d): a hot upgrade's "
                          "new version must answer its health check there, see staggerd(8), "
                          "Hot upgrade",
                          uri ? g_uri_get_port (uri) : 0);
}

/* Where @run's health checks go, from its assigned @ports: the URL of its
 * HTTP checks and the command of its shell checks (owned; NULL when it
 * has none). An AuroraExecutor task's go to its port named "health", after
 * the announcer's aliases, and fill in Thermos's templates. */
static void
health_target (Run *run, GHashTable *ports, gchar **url, gchar **shell)
{
  Slot *slot = run->slot;
  StgLocalRuntime *rt = slot->rt;
  const StgHealthSpec *h = &run->spec->health;
  const StgThermosJob *job = run->task->thermos;

  if (job == NULL)
    {
      StgTemplateVars vars = stg_slot_template_vars (&slot->base, rt->options.cluster, run->version,
                                                     ports);
      *url = g_strdup_printf ("http://%s:%d%s", rt->options.bind,
                              stg_local_health_port (ports, run->task->port_names),
                              h->endpoint ? h->endpoint : "/");
      *shell = h->shell_command ? stg_template_expand (h->shell_command, &vars, NULL, NULL) : NULL;
      return;
    }
  g_autoptr (GHashTable) all = stg_thermos_job_resolve_ports (job, ports, NULL);
  StgThermosRunVars tv;
  stg_thermos_run_vars_init (&tv, slot->base.job, slot->base.key.instance, run->id, NULL,
                             stg_local_user_name (slot), all);
  gint port = all != NULL ? stg_thermos_task_health_port (job, all) : 0;
  g_autofree gchar *endpoint = stg_thermos_template_expand (h->endpoint, "endpoint",
                                                            STG_THERMOS_SCOPE_MESOS, &tv.vars,
                                                            NULL);
  *url = port > 0 && endpoint != NULL
             ? g_strdup_printf ("http://%s:%d%s", rt->options.bind, port, endpoint)
             : g_strdup ("");
  *shell = all != NULL && h->kind == STG_HEALTH_SHELL
               ? stg_thermos_task_health_command (job, &tv.vars, NULL)
               : NULL;
  stg_thermos_run_vars_clear (&tv);
}

/* Starts checking @run, whose assigned ports are @ports and which started
 * with @env in @cwd, at its target (kept for later), or at @probe_url
 * (nullable) for now: a new version beside the old one is checked on its
 * private probe socket, since either process may answer on the shared ones.
 * Shell checks run as Aurora's executor runs them for its tasks (bash
 * where there is one), else with /bin/sh. */
static void
run_watch (Run *run, GHashTable *ports, gchar **env, const gchar *cwd, const gchar *probe_url,
           gboolean healthy)
{
  StgLocalRuntime *rt = run->slot->rt;
  g_autofree gchar *url = NULL, *shell = NULL;
  gboolean bash = run->task->thermos != NULL &&
                  g_file_test ("/bin/bash", G_FILE_TEST_IS_EXECUTABLE);
  gchar *argv[] = { bash ? (gchar *) "/bin/bash" : (gchar *) "/bin/sh", (gchar *) "-c", NULL,
                    NULL };

  health_target (run, ports, &url, &shell);
  argv[2] = shell;
  run->target.session = rt->session;
  run->target.counts = rt->options.health_counts;
  run->target.url = g_steal_pointer (&url);
  run->target.shell_argv = g_strdupv (argv);
  run->target.envp = g_strdupv (env);
  run->target.cwd = g_strdup (cwd);
  run->target.identity = stg_local_identity (run->slot);
  run->target.cgroups = rt->cgroups;
  run->target.cgroup = g_strdup (run->cgroup);
  run->target.snooze_file = g_build_filename (run->sandbox, ".healthchecksnooze", NULL);
  StgHealthTarget now = run->target;
  g_autofree gchar *hint = NULL;
  if (probe_url != NULL)
    {
      now.url = (gchar *) probe_url;
      now.no_answer = hint = probe_hint (probe_url);
    }
  run->health = stg_health_new (&run->spec->health, &now, healthy, on_health, run);
}

/* Checks @run again at its kept target, e.g. once it serves alone. */
static void
run_rewatch (Run *run)
{
  g_clear_pointer (&run->health, stg_health_free);
  run->health = stg_health_new (&run->spec->health, &run->target, run->healthy, on_health, run);
}

/* An announced AuroraExecutor task joins its ServerSet when its runner
 * hears it is healthy (thermos/runner_announce.c); said again after a
 * restart of staggerd, which the runner ignores when it is a member. */
static void
tell_announcer (Run *run)
{
  if (run->announcer && run->healthy && !run->stopping && run->pid > 0)
    stg_process_signal_group (run->pid, SIGUSR1);
}

static void
commit (Run *run, const gchar *why)
{
  Slot *slot = run->slot;
  g_autofree gchar *message = NULL;

  run->healthy = TRUE;
  run->healthy_since_ms = stg_clock_now_ms (slot->rt->clock);
  stg_local_start_done (run);
  if (slot->base.post_owed == run->config_id)
    slot->base.post_owed = 0;
  if (slot->next == run)
    {
      /* Hot upgrade: the new version serves; the old one goes. From now
       * on its checks go where clients go. */
      Run *old = slot->run;
      run_rewatch (run);
      slot->run = run;
      slot->next = NULL;
      if (old != NULL)
        {
          old->stopping = STOP_OLD;
          stg_run_stop (old);
        }
      message = g_strdup_printf ("hot upgrade done: version %d serves (%s)", run->version, why);
    }
  else
    message = g_strdup_printf ("healthy: %s%s", why,
                               run->announcer ? " (its runner announces it in ZooKeeper)" : "");
  tell_announcer (run);
  stg_slot_healthy (&slot->base, run->config_id, run->healthy_since_ms, message);
}

void
stg_run_fail (Run *run, const gchar *why)
{
  Slot *slot = run->slot;

  if (run->failed || run->stopping)
    return;
  run->failed = TRUE;
  stg_local_count_failure (slot, run, why);
  run->stopping = slot->next == run ? STOP_ABANDON : STOP_FAILED;
  stg_run_stop (run);
  if (slot->next == run && slot->run != NULL)
    {
      /* The old version keeps serving. */
      g_autofree gchar *m = g_strdup_printf ("new version %d failed, version %d keeps serving: %s",
                                             run->version, slot->run->version, why);
      stg_local_show_run (slot, m);
    }
  else
    stg_slot_set_phase (&slot->base, STG_TASK_FAILED, run->config_id, API_SCHEDULE_STATUS_FAILED,
                        why);
}

static gboolean
on_hook_timeout (gpointer data)
{
  Run *run = data;

  run->hook_timer = 0;
  if (run->hook != NULL)
    stg_child_kill (run->hook);
  return G_SOURCE_REMOVE;
}

static void
on_post_hook (gpointer data, gint status)
{
  Run *run = data;

  g_clear_handle_id (&run->hook_timer, g_source_remove);
  gboolean ok = WIFEXITED (status) && WEXITSTATUS (status) == 0;
  g_autofree gchar *why = stg_run_hook_outcome ("post_update", status);
  g_clear_pointer (&run->hook, stg_child_free);
  if (ok)
    commit (run, why);
  else
    stg_run_fail (run, why);
}

static void
on_health (gpointer data, gboolean healthy, const gchar *why)
{
  Run *run = data;
  Slot *slot = run->slot;

  if (run->stopping)
    return;
  if (!healthy)
    {
      g_autofree gchar *m = g_strdup_printf ("failed its health check: %s", why);
      stg_run_fail (run, m);
      return;
    }
  if (run->healthy || run->hook != NULL)
    return;
  if (run->from_update && run->spec->post_update.command != NULL)
    {
      g_autoptr (GError) error = NULL;
      run->hook = stg_run_hook (slot, run, &run->spec->post_update, run->task, "post_update",
                                run->from_version, on_post_hook, run, &error);
      if (run->hook == NULL)
        {
          g_autofree gchar *m = g_strdup_printf ("cannot run the post_update hook: %s", error->message);
          stg_run_fail (run, m);
          return;
        }
      run->hook_timer = g_timeout_add ((guint) (run->spec->post_update.timeout_secs * 1000),
                                       on_hook_timeout, run);
      return;
    }
  commit (run, why);
}

StgChild *
stg_run_hook (Slot *slot, Run *in, const StgHookSpec *hook, const StgTaskSpec *spec,
              const gchar *name, gint from_version, StgChildDone done, gpointer data,
              GError **error)
{
  StgLocalRuntime *rt = slot->rt;
  g_autoptr (GHashTable) ports = stg_local_ports (rt, slot, spec->port_names, error);
  if (ports == NULL)
    return NULL;
  StgTemplateVars vars = stg_slot_template_vars (&slot->base, rt->options.cluster,
                                                 stg_store_config_version (rt->store,
                                                                           spec->config_id),
                                                 ports);
  g_autofree gchar *command = stg_template_expand (hook->command, &vars, NULL, error);
  if (command == NULL)
    return NULL;
  g_autofree gchar *root = stg_local_slot_root (slot);
  g_mkdir_with_parents (root, 0700);
  g_autofree gchar *log = g_build_filename (root, "hooks.log", NULL);
  gint fd = g_open (log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "%s: %s", log, g_strerror (saved));
      return NULL;
    }
  g_autofree gchar *banner = g_strdup_printf ("== %s hook for version %d: %s\n", name, vars.version, command);
  (void) !write (fd, banner, strlen (banner));
  g_auto (GStrv) env = stg_local_base_environ (root);
  g_autofree gchar *inst = g_strdup_printf ("%d", slot->base.key.instance);
  g_autofree gchar *ver = g_strdup_printf ("%d", vars.version);
  env = g_environ_setenv (env, "STAGGER_INSTANCE", inst, TRUE);
  env = g_environ_setenv (env, "STAGGER_VERSION", ver, TRUE);
  env = g_environ_setenv (env, "STAGGER_HOOK", name, TRUE);
  g_autofree gchar *from = g_strdup_printf ("%d", from_version);
  env = g_environ_setenv (env, "STAGGER_FROM_VERSION", from, TRUE);
  env = g_environ_setenv (env, "STAGGER_TO_VERSION", ver, TRUE);
  const gchar *argv[] = { "/bin/sh", "-c", command, NULL };
  GArray *join = stg_local_limits_join_run (in, error);
  if (join == NULL)
    {
      close (fd);
      return NULL;
    }
  StgSpawnRequest req = {
    .argv = argv,
    .envp = (const gchar *const *) env,
    .cwd = root,
    .identity = stg_local_identity (slot),
    .group = STG_SPAWN_GROUP,
    .out = { .to = STG_SPAWN_FD, .fd = fd },
    .err = { .to = STG_SPAWN_AS_STDOUT },
    .join = (const gint *) join->data,
    .n_join = join->len,
  };
  StgChild *child = stg_child_spawn (&req, done, data, error);
  stg_cgroup_close_procs (join);
  close (fd);
  return child;
}

gchar *
stg_run_hook_outcome (const gchar *name, gint status)
{
  if (WIFSIGNALED (status))
    return g_strdup_printf ("%s hook was stopped (timed out)", name);
  g_autofree gchar *how = stg_spawn_describe (status);
  return g_strdup_printf ("%s hook %s", name, how);
}

/* ---- watching the process ------------------------------------------------------ */

static void
on_child (GPid pid, gint wait_status, gpointer data)
{
  Run *run = data;
  g_autofree gchar *how = stg_spawn_describe (wait_status);
  const gchar *meaning = run->task->thermos != NULL && WIFEXITED (wait_status)
                             ? stg_thermos_exit_meaning (WEXITSTATUS (wait_status))
                             : NULL;

  (void) pid;
  run->child_watch = 0;
  if (meaning != NULL)
    {
      g_autofree gchar *runner = g_strdup_printf ("%s (stagger-thermos %s)", meaning, how);
      g_free (how);
      how = g_steal_pointer (&runner);
    }
  run_end (run, WIFEXITED (wait_status) && WEXITSTATUS (wait_status) == 0, how);
}

static gboolean
on_pidfd (gint fd, GIOCondition condition, gpointer data)
{
  Run *run = data;
  g_autofree gchar *state = stg_local_runner_state (run);

  (void) fd;
  (void) condition;
  run->pidfd_watch = 0;
  if (state != NULL)
    {
      /* Not our child, but its runner said how the task ended. */
      g_autofree gchar *how = g_strdup_printf ("ended: its task's state is %s (it was adopted)",
                                               state);
      run_ended (run, g_str_equal (state, "SUCCESS"), how);
      return G_SOURCE_REMOVE;
    }
  /* Not our child: its exit status is not ours to know. */
  run_end (run, FALSE, "ended (its exit status is unknown: it was adopted)");
  return G_SOURCE_REMOVE;
}

static gboolean
on_kill_timeout (gpointer data)
{
  Run *run = data;

  run->kill_timer = 0;
  g_info ("runtime: run %" G_GINT64_FORMAT " of instance %d did not stop in time: SIGKILL", run->id,
          run->slot->base.key.instance);
  stg_process_signal_group (run->pid, SIGKILL);
  return G_SOURCE_REMOVE;
}

void
stg_run_stop (Run *run)
{
  g_assert (run->stopping != STOP_NONE); /* why it stops decides what follows its exit */
  if (run->pid <= 0)
    return;
  if (run->health != NULL)
    g_clear_pointer (&run->health, stg_health_free);
  if (run->hook != NULL)
    stg_child_kill (run->hook);
  stg_process_signal_group (run->pid, SIGTERM);
  if (run->kill_timer == 0)
    run->kill_timer = g_timeout_add ((guint) (run->spec->stop_timeout_secs * 1000) + 1,
                                     on_kill_timeout, run);
}

void
stg_run_lost (Run *run)
{
  g_clear_handle_id (&run->child_watch, g_source_remove);
  g_clear_handle_id (&run->pidfd_watch, g_source_remove);
  g_clear_handle_id (&run->group_timer, g_source_remove);
  run_ended (run, FALSE, "was gone when the runtime looked for it (its end was not seen)");
}

void
stg_run_free (Run *run)
{
  if (run == NULL)
    return;
  if (run->counted)
    run->slot->rt->starting--; /* no new start from here: the runtime may be going */
  g_clear_handle_id (&run->child_watch, g_source_remove);
  g_clear_handle_id (&run->pidfd_watch, g_source_remove);
  g_clear_handle_id (&run->kill_timer, g_source_remove);
  g_clear_handle_id (&run->hook_timer, g_source_remove);
  g_clear_handle_id (&run->group_timer, g_source_remove);
  g_clear_pointer (&run->end_how, g_free);
  g_clear_pointer (&run->health, stg_health_free);
  if (run->hook != NULL)
    {
      stg_child_kill (run->hook);
      g_clear_pointer (&run->hook, stg_child_free);
    }
  if (run->pidfd >= 0)
    close (run->pidfd);
  g_free (run->target.url);
  g_strfreev (run->target.shell_argv);
  g_strfreev (run->target.envp);
  g_free (run->target.cwd);
  g_free (run->target.snooze_file);
  g_free (run->target.cgroup);
  g_free (run->sandbox);
  g_free (run->cgroup);
  g_free (run);
}

static gboolean
on_group_gone (gpointer data)
{
  Run *run = data;

  if (stg_process_group_runs (run->pid))
    return G_SOURCE_CONTINUE;
  run->group_timer = 0;
  g_autofree gchar *how = g_steal_pointer (&run->end_how);
  run_ended (run, run->end_success, how);
  return G_SOURCE_REMOVE;
}

/* The run's first process is gone (for a command string, the shell that
 * ran it). The rest of its process group may still hold what the run had
 * (its port): the run ends once that is gone too, killed at once when
 * nobody asked the run to stop, else given the stop's own time (its kill
 * timer sends SIGKILL). A Thermos runner's processes are ended by mark. */
static void
run_end (Run *run, gboolean success, const gchar *how)
{
  if (run->task->thermos != NULL || run->group_timer != 0 || !stg_process_group_runs (run->pid))
    {
      if (run->group_timer == 0)
        run_ended (run, success, how);
      return;
    }
  g_message ("runtime: instance %d: run %" G_GINT64_FORMAT "'s first process ended; waiting "
             "for the rest of its group%s",
             run->slot->base.key.instance, run->id, run->stopping ? "" : " (killed)");
  if (!run->stopping)
    stg_process_signal_group (run->pid, SIGKILL);
  run->end_success = success;
  run->end_how = g_strdup (how);
  run->group_timer = g_timeout_add (10, on_group_gone, run);
}

/* The run's process is gone: decide what follows, by why it stopped. */
static void
run_ended (Run *run, gboolean success, const gchar *how)
{
  StgLocalRuntime *rt = run->slot->rt;

  run_settle (run, success, how);
  /* One instance fewer here: a start its job's limit held back may fit. */
  stg_local_release_waiting (rt);
}

/* What follows the end of @run, by why it stopped (run_ended). */
static void
run_settle (Run *run, gboolean success, const gchar *how)
{
  Slot *slot = run->slot;
  gboolean was_next = slot->next == run;
  StopReason reason = run->stopping;
  g_autofree gchar *oom = stg_local_limits_end (run);
  g_autofree gchar *message = g_strdup_printf ("run %" G_GINT64_FORMAT " (pid %d) %s", run->id,
                                               (int) run->pid, oom ? oom : how);

  g_clear_handle_id (&run->kill_timer, g_source_remove);
  g_clear_pointer (&run->health, stg_health_free);
  stg_local_start_done (run);
  if (run->task->thermos != NULL)
    {
      /* The runner is gone: so is every process of its task, whatever
       * session it went to (they carry the run's mark). */
      g_autofree gchar *mark = stg_local_mark (slot, run->id);
      guint left = stg_process_signal_marked (STG_LOCAL_MARK, mark, SIGKILL);
      if (left > 0)
        g_message ("runtime: instance %d: %u processes of run %" G_GINT64_FORMAT
                   " outlived stagger-thermos: killed",
                   slot->base.key.instance, left, run->id);
    }
  if (was_next)
    slot->next = NULL;
  else if (slot->run == run)
    slot->run = NULL;
  if (was_next && slot->run != NULL && slot->run->health == NULL && !slot->run->stopping)
    run_rewatch (slot->run);    /* the old version serves alone again */

  if (was_next && reason == STOP_NONE)
    {
      /* The new version of a hot upgrade died: the old one keeps serving. */
      g_autofree gchar *m = g_strdup_printf ("new version %s; version %d keeps serving", message,
                                             slot->run ? slot->run->version : 0);
      stg_local_count_failure (slot, run, m);
      if (slot->run != NULL)
        stg_local_show_run (slot, m);
      stg_run_free (run);
      return;
    }
  switch (reason)
    {
    case STOP_NONE:
      stg_local_after_exit (slot, run, success, message);
      break;
    case STOP_FAILED:
      /* Counted already; restart like any failed run. */
      stg_local_after_exit (slot, run, FALSE, NULL);
      break;
    case STOP_KILL:
      if (slot->run == NULL && slot->next == NULL)
        {
          stg_slot_set_phase (&slot->base, STG_TASK_ABSENT, 0, API_SCHEDULE_STATUS_KILLED, message);
          stg_run_free (run);
          stg_slot_remove (&slot->base);
          return;
        }
      break;
    case STOP_REPLACE:
    case STOP_RESTART:
      stg_slot_set_phase (&slot->base, STG_TASK_PENDING, run->config_id, API_SCHEDULE_STATUS_KILLED,
                          message);
      if (slot->base.want != 0 && (reason == STOP_REPLACE || slot->base.want != run->config_id))
        stg_local_start_replacement (slot);
      else if (slot->base.want != 0)
        stg_run_start_config (slot, slot->base.want, FALSE, FALSE);
      break;
    case STOP_OLD:
    case STOP_ABANDON:
      break;
    }
  stg_run_free (run);
}

/* ---- starting --------------------------------------------------------------------- */

/* Counts a run that could not start and decides what follows. */
static Run *
start_failed (Slot *slot, gint64 config_id, const gchar *why)
{
  g_autofree gchar *m = g_strdup_printf ("cannot start: %s", why);

  g_warning ("runtime: instance %d of %s/%s/%s %s", slot->base.key.instance, slot->base.job->role,
             slot->base.job->environment, slot->base.job->name, m);
  stg_local_count_failure (slot, NULL, m);
  stg_slot_set_phase (&slot->base, STG_TASK_FAILED, config_id, API_SCHEDULE_STATUS_FAILED, m);
  stg_local_after_exit (slot, NULL, FALSE, NULL);
  return NULL;
}

/* A new run of @slot for @spec, with its sandbox folder made. */
static Run *
run_new (Slot *slot, const StgTaskSpec *spec, gboolean from_update, GError **error)
{
  Run *run = g_new0 (Run, 1);

  run->slot = slot;
  run->pidfd = -1;
  run->disk_used = -1;
  run->cpu_rate = -1;
  run->id = ++slot->base.run_id;
  run->config_id = spec->config_id;
  run->version = stg_store_config_version (slot->rt->store, spec->config_id);
  run->service = spec->config->isService;
  run->from_update = from_update;
  /* What it replaces: the run it starts beside, else what the slot ran. */
  gint64 replaced = slot->run != NULL ? slot->run->config_id : slot->base.config_id;
  if (from_update && replaced != 0)
    run->from_version = stg_store_config_version (slot->rt->store, replaced);
  run->task = spec;
  run->spec = spec->exec;
  g_autofree gchar *root = stg_local_slot_root (slot);
  g_autofree gchar *seq = g_strdup_printf ("%" G_GINT64_FORMAT, run->id);
  run->sandbox = g_build_filename (root, seq, NULL);
  if (g_mkdir_with_parents (run->sandbox, 0700) != 0 || !stg_local_open_folders (slot, root))
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "%s: %s", run->sandbox,
                   g_strerror (saved));
      stg_run_free (run);
      return NULL;
    }
  stg_local_prune (slot, run->id);
  return run;
}

/* Writes the intent before the fork: "starting run R of slot S (beside
 * run Q)", so a daemon that dies before it records the pid knows which
 * marked process to look for. Always TRUE (a store failure is logged). */
static gboolean
launch_intent (Run *run, gboolean beside)
{
  Slot *slot = run->slot;

  g_assert (beside ? slot->run != NULL : slot->run == NULL); /* one serving run, at most */
  if (beside)
    slot->next = run;
  else
    slot->run = run;
  stg_slot_save (&slot->base);
  stg_local_crash_point (slot->rt, beside ? "beside-intent" : "intent");
  return TRUE;
}

/* Watches the spawned process and starts its health checks. */
static void
launch_watch (Run *run, Launch *l, gboolean beside)
{
  Slot *slot = run->slot;
  StgLocalRuntime *rt = slot->rt;
  const gchar *endpoint = run->spec->health.endpoint ? run->spec->health.endpoint : "/";

  run->child_watch = g_child_watch_add (run->pid, on_child, run);
  g_autofree gchar *probe_url = l->probe_port != 0
      ? g_strdup_printf ("http://%s:%d%s", rt->options.bind, l->probe_port, endpoint) : NULL;
  run_watch (run, l->ports, l->env, l->cwd, probe_url, FALSE);
  /* The old version's checks could reach the new one: they pause until it
   * is alone again. */
  if (beside && slot->run != NULL)
    g_clear_pointer (&slot->run->health, stg_health_free);
}

Run *
stg_run_start (Slot *slot, const StgTaskSpec *spec, gboolean beside, gboolean from_update)
{
  StgLocalRuntime *rt = slot->rt;
  g_autoptr (GError) error = NULL;
  Launch l = { .probe_fd = -1, .task_fd = -1 };
  Run *run = NULL;

  if (!beside && stg_local_start_held (slot, spec, from_update))
    return NULL;

  l.ports = stg_local_ports (rt, slot, spec->port_names, &error);
  if (l.ports != NULL)
    run = run_new (slot, spec, from_update, &error);
  if (run != NULL)
    {
      l.vars = stg_slot_template_vars (&slot->base, rt->options.cluster, run->version, l.ports);
    }
  if (run == NULL || !stg_launch_argv (run, &l, beside, &error) ||
      !stg_launch_sockets (run, &l, beside, &error) || !launch_intent (run, beside) ||
      !stg_launch_spawn (run, &l, &error))
    {
      stg_launch_clear (&l);
      if (run != NULL && slot->run == run)
        slot->run = NULL;
      if (run != NULL && slot->next == run)
        slot->next = NULL;
      stg_run_free (run);
      return start_failed (slot, spec->config_id, error->message);
    }
  run->counted = TRUE;
  rt->starting++;
  stg_local_crash_point (rt, beside ? "beside-spawned" : "spawned");
  gint alt = beside && slot->run != NULL ? slot->run->version : 0;
  launch_watch (run, &l, beside);
  stg_launch_clear (&l); /* the child holds the probe socket now */

  const gchar *unlimited = stg_local_limits_unenforced (rt);
  g_autofree gchar *with = beside ? g_strdup_printf (" beside version %d", alt) : g_strdup ("");
  g_autofree gchar *m = g_strdup_printf ("started version %d%s (pid %d, run %" G_GINT64_FORMAT
                                         ")%s%s",
                                         run->version, with, (int) run->pid, run->id,
                                         unlimited ? "; " : "", unlimited ? unlimited : "");
  stg_slot_set_phase (&slot->base, STG_TASK_STARTING, spec->config_id, API_SCHEDULE_STATUS_STARTING,
                      m);
  return run;
}

Run *
stg_run_start_config (Slot *slot, gint64 config_id, gboolean beside, gboolean from_update)
{
  g_autoptr (GError) error = NULL;
  const StgTaskSpec *spec = stg_spec_cache_get (slot->rt->specs, config_id, &error);

  if (spec == NULL)
    return start_failed (slot, config_id, error->message);
  return stg_run_start (slot, spec, beside, from_update);
}

/* ---- adopting ---------------------------------------------------------------------- */

Run *
stg_run_adopt (Slot *slot, const StgRunFacts *row, GError **error)
{
  StgLocalRuntime *rt = slot->rt;
  gint64 config_id = row->config_id;
  const StgTaskSpec *spec = stg_spec_cache_get (rt->specs, config_id, error);
  if (spec == NULL)
    return NULL;
  gchar **names = spec->port_names;
  g_autoptr (GHashTable) ports = stg_local_ports (rt, slot, names, error);
  if (ports == NULL)
    return NULL;
  gint pidfd = stg_process_pidfd ((GPid) row->pid, error);
  if (pidfd < 0)
    return NULL;

  Run *run = g_new0 (Run, 1);
  run->slot = slot;
  run->disk_used = -1;
  run->cpu_rate = -1;
  run->id = row->run_id;
  run->config_id = config_id;
  run->version = stg_store_config_version (rt->store, config_id);
  run->service = spec->config->isService;
  run->task = spec;
  run->spec = spec->exec;
  run->pid = (GPid) row->pid;
  run->pid_start = row->pid_start;
  run->pidfd = pidfd;
  run->pidfd_watch = g_unix_fd_add (pidfd, G_IO_IN, on_pidfd, run);
  g_autofree gchar *root = stg_local_slot_root (slot);
  g_autofree gchar *seq = g_strdup_printf ("%" G_GINT64_FORMAT, run->id);
  run->sandbox = g_build_filename (root, seq, NULL);
  if (stg_local_limits_unenforced (rt) == NULL)
    run->cgroup = stg_local_cgroup_name (slot, run->id); /* still holding it, limits and all */
  slot->run = run;
  slot->base.run_id = MAX (slot->base.run_id, row->run_id);

  /* Its listening sockets, taken back from it for the next hot upgrade. */
  if (run->spec->hot_upgrade && slot->sockets == NULL)
    {
      slot->sockets = g_array_new (FALSE, FALSE, sizeof (gint));
      for (guint i = 0; names[i] != NULL; i++)
        {
          g_autoptr (GError) local = NULL;
          gint fd = stg_process_getfd (pidfd, 3 + (gint) i, &local);
          if (fd < 0)
            fd = stg_local_listen (rt, GPOINTER_TO_INT (g_hash_table_lookup (ports, names[i])), NULL);
          if (fd >= 0)
            g_array_append_val (slot->sockets, fd);
        }
    }

  gboolean healthy = row->healthy_since_ms > 0;
  run->healthy = healthy;
  run->healthy_since_ms = row->healthy_since_ms;
  run->announcer = run->task->thermos != NULL && run->task->thermos->announce &&
                   stg_process_has_arg (run->pid, "--announcer-ensemble");
  tell_announcer (run);
  g_auto (GStrv) env = stg_local_base_environ (run->sandbox);
  run_watch (run, ports, env, run->sandbox, NULL, healthy);
  return run;
}
