/* runner.c: one instance of a Thermos task, from its first process to its
 * end, with Thermos's stages:
 *
 *   ACTIVE --[regular plan complete, or unhealthy: active_step]---------> CLEANING
 *   ACTIVE --[SIGTERM/SIGINT, after the HTTP lifecycle: lifecycle_step]--> CLEANING
 *   CLEANING --[no process left: cleaning_step]--------------------------> FINALIZING
 *   CLEANING --[the deadline passed: cleaning_step]----------------------> ending
 *   FINALIZING --[final plan complete or stuck, or the deadline passed]--> ending
 *   ending = SUCCESS | FAILED | KILLED (a stop was asked)
 *
 * Invariants: (1) processes start only in ACTIVE (ordinary ones, and not
 * once a stop is asked) and FINALIZING (final ones); (2) entering CLEANING
 * sends SIGTERM to every process tree, and sets one deadline for CLEANING
 * and FINALIZING together: finalization_wait seconds ahead when the task
 * ended on its own, the preemption wait (a minute, as Thermos's kill) when
 * a stop was asked; a stop asked in CLEANING or FINALIZING sets it anew
 * from then, as Thermos's kill does; (3) in an ending state nothing
 * starts, and what is left gets SIGKILL until no child is left (or the
 * reap deadline passes); then the loop quits.
 *
 * Every event (a child's exit, a timer, a signal, a lifecycle answer) ends
 * in pump(), which runs the current stage's step. Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib-unix.h>

#include "common/error.h"
#include "thermos/runner.h"

/* The longest the loop sleeps without looking around. */
#define MAX_WAIT_US G_USEC_PER_SEC
/* How long an ending state waits for SIGKILLed processes to go. */
#define REAP_WAIT_US (STG_THERMOS_REAP_WAIT_SECS * G_USEC_PER_SEC)

static gboolean
ended (const StgRunner *r)
{
  return r->stage >= STG_RUNNER_SUCCESS;
}

/* A stop was asked (it decides the ending). */
static gboolean
stopping (const StgRunner *r)
{
  return r->ending == STG_RUNNER_KILLED;
}

/* A lifecycle POST is under way (its answer comes back on the loop). */
static gboolean
posting (const StgRunner *r)
{
  return r->lifecycle == STG_LIFECYCLE_GRACEFUL || r->lifecycle == STG_LIFECYCLE_SHUTDOWN;
}

/* The arrows drawn above. */
static gboolean
may_move (StgRunnerStage from, StgRunnerStage to)
{
  switch (from)
    {
    case STG_RUNNER_ACTIVE:
      return to == STG_RUNNER_CLEANING;
    case STG_RUNNER_CLEANING:
      return to == STG_RUNNER_FINALIZING || to >= STG_RUNNER_SUCCESS;
    case STG_RUNNER_FINALIZING:
      return to >= STG_RUNNER_SUCCESS;
    default:
      return FALSE;
    }
}

static gdouble
now_secs (void)
{
  return (gdouble) g_get_monotonic_time () / G_USEC_PER_SEC;
}

static void
save (StgRunner *r)
{
  g_autoptr (GError) error = NULL;

  if (!stg_runner_state_write (r, &error))
    g_warning ("%s", error->message);
}

static void
set_stage (StgRunner *r, StgRunnerStage stage)
{
  g_assert (may_move (r->stage, stage));
  g_message ("task %s: %s -> %s", r->task_id, stg_runner_stage_name (r->stage),
             stg_runner_stage_name (stage));
  r->stage = stage;
  save (r);
}

static void wake (StgRunner *r);

static StgThermosPlanner *
plan_of (StgRunner *r, const StgRunnerProc *proc)
{
  return proc->spec->final ? r->finalizing : r->regular;
}

/* Starts what @plan has ready, within max_concurrency. A process that
 * cannot be started counts as a failed run, as in Thermos. */
static void
start_ready (StgRunner *r, StgThermosPlanner *plan)
{
  g_autoptr (GArray) ready = stg_thermos_planner_ready (plan, now_secs ());
  gint limit = r->job->task.max_concurrency;
  guint room = limit == 0 ? G_MAXUINT
                          : (guint) MAX (limit - (gint) stg_thermos_planner_running (plan), 0);
  guint tried = 0;

  for (guint i = 0; i < ready->len && i < room; i++, tried++)
    {
      guint index = g_array_index (ready, guint, i);
      StgRunnerProc *proc = &r->procs[index];
      g_autoptr (GError) error = NULL;
      stg_thermos_planner_start (plan, index);
      if (stg_runner_spawn (r, proc, &error))
        {
          g_message ("process %s: run %d started (pid %d)", proc->spec->name, proc->run, proc->pid);
          continue;
        }
      g_warning ("process %s: %s", proc->spec->name, error->message);
      proc->state = STG_RUN_FAILED;
      stg_thermos_planner_end (plan, index, STG_THERMOS_RUN_FAILED, now_secs ());
      wake (r);
    }
  if (tried > 0)
    save (r);
}

/* What CLEANING and FINALIZING get from now: the preemption wait once a
 * stop was asked, else finalization_wait. */
static void
set_deadline (StgRunner *r)
{
  gint secs = stopping (r) ? r->preemption_wait : r->job->task.finalization_wait;

  r->deadline = g_get_monotonic_time () + (gint64) secs * G_USEC_PER_SEC;
}

/* The deadline's name, for messages. */
static const gchar *
deadline_name (const StgRunner *r)
{
  return stopping (r) ? "the preemption wait" : "finalization_wait";
}

/* ACTIVE ends: SIGTERM to every process tree, and the deadline for the
 * rest. */
static void
enter_cleaning (StgRunner *r, StgRunnerStage ending)
{
  if (r->ending != STG_RUNNER_KILLED)
    r->ending = ending;
  set_deadline (r);
  set_stage (r, STG_RUNNER_CLEANING);
  if (r->announcer != NULL)
    stg_serverset_leave (r->announcer);
  stg_runner_tree_signal (r, SIGTERM);
}

static void
enter_ending (StgRunner *r)
{
  r->reap_deadline = g_get_monotonic_time () + REAP_WAIT_US;
  set_stage (r, r->ending);
  stg_runner_tree_signal (r, SIGKILL);
}

static void lifecycle_post (StgRunner *r, const gchar *endpoint);

/* A stop was asked: the HTTP lifecycle, then CLEANING. The waits end early
 * when only ephemeral processes run, as Aurora's executor stops waiting
 * once the task has ended, which ephemeral processes do not hold up. */
static void
lifecycle_step (StgRunner *r)
{
  const StgThermosLifecycle *l = &r->job->lifecycle;
  gboolean waiting = r->lifecycle == STG_LIFECYCLE_GRACEFUL_WAIT ||
                     r->lifecycle == STG_LIFECYCLE_SHUTDOWN_WAIT;
  gboolean running = stg_thermos_planner_running_required (r->regular) > 0;

  if (waiting && !running)
    r->lifecycle = STG_LIFECYCLE_DONE;
  else if (waiting && g_get_monotonic_time () >= r->lifecycle_deadline)
    {
      if (r->lifecycle == STG_LIFECYCLE_GRACEFUL_WAIT)
        lifecycle_post (r, l->shutdown_endpoint);
      else
        r->lifecycle = STG_LIFECYCLE_DONE;
    }
  if (r->lifecycle == STG_LIFECYCLE_DONE)
    enter_cleaning (r, STG_RUNNER_KILLED);
}

static void
active_step (StgRunner *r)
{
  if (stopping (r))
    {
      lifecycle_step (r);
      return;
    }
  start_ready (r, r->regular);
  gboolean healthy = stg_thermos_planner_healthy (r->regular, r->job->task.max_failures);
  if (stg_thermos_planner_complete (r->regular))
    enter_cleaning (r, healthy ? STG_RUNNER_SUCCESS : STG_RUNNER_FAILED);
  else if (!healthy)
    enter_cleaning (r, STG_RUNNER_FAILED);
}

static void
cleaning_step (StgRunner *r)
{
  if (!stg_runner_tree_busy ())
    {
      set_stage (r, STG_RUNNER_FINALIZING);
      return;
    }
  if (g_get_monotonic_time () >= r->deadline)
    {
      g_message ("%s is over: skipping the final processes", deadline_name (r));
      enter_ending (r);
    }
}

static void
finalizing_step (StgRunner *r)
{
  if (g_get_monotonic_time () >= r->deadline)
    {
      g_message ("%s is over", deadline_name (r));
      enter_ending (r);
      return;
    }
  start_ready (r, r->finalizing);
  if (stg_thermos_planner_complete (r->finalizing) ||
      stg_thermos_planner_deadlocked (r->finalizing))
    enter_ending (r);
}

/* In an ending state: SIGKILL whatever is left until nothing is. */
static gboolean
ending_step (StgRunner *r)
{
  if (!stg_runner_tree_busy ())
    return TRUE;
  if (g_get_monotonic_time () >= r->reap_deadline)
    {
      g_warning ("processes are still left after SIGKILL: leaving them");
      return TRUE;
    }
  stg_runner_tree_signal (r, SIGKILL);
  return FALSE;
}

static gboolean on_timer (gpointer data);

/* When the state machine must look again: the next min_duration, lifecycle
 * or finalization deadline, within MAX_WAIT_US. */
static void
arm_timer (StgRunner *r)
{
  gint64 now = g_get_monotonic_time ();
  gint64 wake = now + MAX_WAIT_US;
  gdouble wait = -1;

  if (r->stage == STG_RUNNER_ACTIVE && !stopping (r))
    wait = stg_thermos_planner_next_wait (r->regular, now_secs ());
  else if (r->stage == STG_RUNNER_FINALIZING)
    wait = stg_thermos_planner_next_wait (r->finalizing, now_secs ());

  if (wait >= 0)
    wake = MIN (wake, now + (gint64) (wait * G_USEC_PER_SEC) + 1);
  if (r->stage == STG_RUNNER_CLEANING || r->stage == STG_RUNNER_FINALIZING)
    wake = MIN (wake, r->deadline);
  if (r->lifecycle == STG_LIFECYCLE_GRACEFUL_WAIT || r->lifecycle == STG_LIFECYCLE_SHUTDOWN_WAIT)
    wake = MIN (wake, r->lifecycle_deadline);
  if (ended (r))
    wake = MIN (wake, now + G_USEC_PER_SEC / 10);
  g_clear_handle_id (&r->timer, g_source_remove);
  r->timer = g_timeout_add ((guint) MAX ((wake - now + 999) / 1000, 0), on_timer, r);
}

static void
pump (StgRunner *r)
{
  StgRunnerStage before;

  do
    {
      before = r->stage;
      if (r->stage == STG_RUNNER_ACTIVE)
        active_step (r);
      else if (r->stage == STG_RUNNER_CLEANING)
        cleaning_step (r);
      else if (r->stage == STG_RUNNER_FINALIZING)
        finalizing_step (r);
    }
  while (r->stage != before && !ended (r));
  if (ended (r) && ending_step (r) && !posting (r))
    {
      g_main_loop_quit (r->loop);
      return;
    }
  arm_timer (r);
}

static gboolean
on_timer (gpointer data)
{
  StgRunner *r = data;

  r->timer = 0;
  pump (r);
  return G_SOURCE_REMOVE;
}

static void
wake (StgRunner *r)
{
  g_clear_handle_id (&r->timer, g_source_remove);
  r->timer = g_timeout_add (0, on_timer, r);
}

/* ---- processes ending --------------------------------------------------------------- */

/* A child ended: a process run, or an orphan the runner adopted. */
static void
process_exited (StgRunner *r, GPid pid, gint status)
{
  StgRunnerProc *proc = NULL;

  for (guint i = 0; i < r->n_procs && proc == NULL; i++)
    if (r->procs[i].pid == pid)
      proc = &r->procs[i];
  if (proc == NULL)
    return; /* an orphan the runner adopted */
  guint index = (guint) (proc - r->procs);
  StgThermosPlanner *plan = plan_of (r, proc);
  proc->pid = 0;
  proc->stop_time = g_get_real_time ();
  proc->exit_status = WIFEXITED (status) ? WEXITSTATUS (status) : -1;
  proc->signal = WIFSIGNALED (status) ? WTERMSIG (status) : 0;
  proc->state = proc->signal != 0        ? STG_RUN_KILLED
                : proc->exit_status == 0 ? STG_RUN_SUCCESS
                                         : STG_RUN_FAILED;
  /* What a failed or killed run left in its process group goes with it,
   * before the process runs again. A successful run's leftovers are what it
   * started on purpose: a program that daemonizes exits 0 while its child
   * is still on its way out of the group (fork, then setsid), and a group
   * kill here would race with that setsid. They stay the runner's orphans
   * and are signalled with the task. A daemon process runs again, so its
   * group is emptied first either way. */
  if (proc->state != STG_RUN_SUCCESS || proc->spec->daemon)
    kill (-pid, SIGKILL);
  if (proc->signal != 0)
    g_message ("process %s: run %d killed by signal %d", proc->spec->name, proc->run, proc->signal);
  else
    g_message ("process %s: run %d exited with status %d", proc->spec->name, proc->run,
               proc->exit_status);
  if (stg_thermos_planner_state (plan, index) == STG_THERMOS_PLAN_RUNNING)
    stg_thermos_planner_end (plan, index,
                             proc->state == STG_RUN_SUCCESS  ? STG_THERMOS_RUN_SUCCEEDED
                             : proc->state == STG_RUN_FAILED ? STG_THERMOS_RUN_FAILED
                                                             : STG_THERMOS_RUN_LOST,
                             now_secs ());
  save (r);
  wake (r);
}

static gboolean
on_sigchld (gint fd, GIOCondition condition, gpointer data)
{
  StgRunner *r = data;
  guint8 buf[512];

  GPid pid;
  gint status;

  (void) condition;
  while (read (fd, buf, sizeof buf) > 0)
    ;
  while (stg_runner_tree_reap (&pid, &status))
    process_exited (r, pid, status);
  return G_SOURCE_CONTINUE;
}

/* ---- stopping ----------------------------------------------------------------------- */

static void
on_lifecycle_answer (GObject *source, GAsyncResult *result, gpointer data)
{
  StgRunner *r = data;
  gboolean handled = stg_runner_lifecycle_post_finish (result);
  const StgThermosLifecycle *l = &r->job->lifecycle;
  gboolean graceful = r->lifecycle == STG_LIFECYCLE_GRACEFUL;

  (void) source;
  g_message ("lifecycle: POST %s %s",
             graceful ? l->graceful_shutdown_endpoint : l->shutdown_endpoint,
             handled ? "was answered" : "got no answer");
  if (ended (r) || r->stage != STG_RUNNER_ACTIVE)
    r->lifecycle = STG_LIFECYCLE_DONE;
  else if (handled)
    {
      gint secs = graceful ? l->graceful_shutdown_wait_secs : l->shutdown_wait_secs;
      r->lifecycle = graceful ? STG_LIFECYCLE_GRACEFUL_WAIT : STG_LIFECYCLE_SHUTDOWN_WAIT;
      r->lifecycle_deadline = g_get_monotonic_time () + (gint64) secs * G_USEC_PER_SEC;
    }
  else if (graceful)
    lifecycle_post (r, l->shutdown_endpoint);
  else
    r->lifecycle = STG_LIFECYCLE_DONE;
  pump (r);
}

static void
lifecycle_post (StgRunner *r, const gchar *endpoint)
{
  const StgThermosLifecycle *l = &r->job->lifecycle;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *path = stg_thermos_template_expand (endpoint, "lifecycle.http",
                                                        STG_THERMOS_SCOPE_MESOS, &r->vars, &error);
  gint port = GPOINTER_TO_INT (g_hash_table_lookup (r->ports, l->port));

  r->lifecycle = endpoint == l->graceful_shutdown_endpoint ? STG_LIFECYCLE_GRACEFUL
                                                           : STG_LIFECYCLE_SHUTDOWN;
  if (path == NULL || port <= 0)
    {
      if (path == NULL)
        g_warning ("%s", error->message);
      r->lifecycle = STG_LIFECYCLE_DONE;
      return;
    }
  stg_runner_lifecycle_post ((guint16) port, path, NULL, on_lifecycle_answer, r);
}

static gboolean
on_stop_signal (gpointer data)
{
  StgRunner *r = data;

  if (stopping (r) || ended (r))
    {
      g_message ("already stopping");
      return G_SOURCE_CONTINUE;
    }
  g_message ("asked to stop");
  r->ending = STG_RUNNER_KILLED;
  /* Clients stop coming before the task hears of the stop. */
  if (r->announcer != NULL)
    stg_serverset_leave (r->announcer);
  if (r->stage == STG_RUNNER_CLEANING || r->stage == STG_RUNNER_FINALIZING)
    set_deadline (r); /* the preemption wait, from now */
  if (r->stage == STG_RUNNER_ACTIVE && r->job->lifecycle.enabled)
    lifecycle_post (r, r->job->lifecycle.graceful_shutdown_endpoint);
  else if (r->stage == STG_RUNNER_ACTIVE)
    r->lifecycle = STG_LIFECYCLE_DONE;
  pump (r);
  return G_SOURCE_CONTINUE;
}

/* SIGUSR1: staggerd found the instance healthy (again, after a restart of
 * its own): announced from now on, unless it is stopping. */
static gboolean
on_healthy_signal (gpointer data)
{
  StgRunner *r = data;

  if (r->announcer != NULL && r->stage == STG_RUNNER_ACTIVE && !stopping (r) &&
      !stg_serverset_wanted (r->announcer))
    {
      g_message ("healthy: announced in ZooKeeper");
      stg_serverset_join (r->announcer);
    }
  return G_SOURCE_CONTINUE;
}

/* ---- the runner --------------------------------------------------------------------- */

StgRunner *
stg_runner_new (StgThermosJob *job, const StgThermosVars *vars, GHashTable *ports,
                const gchar *sandbox, const gchar *shell, gchar **env,
                const StgRunnerLogDefaults *log_defaults, GError **error)
{
  g_autoptr (StgThermosJob) owned = job;
  StgRunner *r = g_new0 (StgRunner, 1);

  r->hostname = g_strdup (vars->hostname);
  r->task_id = g_strdup (vars->task_id);
  r->user = g_strdup (vars->user);
  r->ports = g_hash_table_ref (ports);
  r->vars = (StgThermosVars){ vars->instance, r->hostname, r->task_id, r->user, r->ports };
  r->sandbox = g_strdup (sandbox);
  r->shell = g_strdup (shell);
  g_autofree gchar *shell_name = g_path_get_basename (shell);
  r->bash = g_str_equal (shell_name, "bash");
  r->environ = g_strdupv (env);
  r->log_defaults = *log_defaults;
  r->preemption_wait = STG_THERMOS_PREEMPTION_WAIT_SECS;
  r->sigchld_fd = -1;
  r->job = g_steal_pointer (&owned);
  r->n_procs = r->job->task.processes->len;
  r->procs = g_new0 (StgRunnerProc, r->n_procs);
  for (guint i = 0; i < r->n_procs; i++)
    {
      StgRunnerProc *proc = &r->procs[i];
      g_autofree gchar *where = g_strdup_printf ("task.processes[%u].cmdline", i);
      proc->spec = stg_thermos_task_process (&r->job->task, i);
      proc->run = -1;
      proc->exit_status = -1;
      proc->cmdline = stg_thermos_template_expand (proc->spec->cmdline, where,
                                                   STG_THERMOS_SCOPE_ALL, &r->vars, error);
      if (proc->cmdline == NULL)
        {
          stg_runner_free (r);
          return NULL;
        }
    }
  r->regular = stg_thermos_planner_new (&r->job->task, FALSE);
  r->finalizing = stg_thermos_planner_new (&r->job->task, TRUE);
  r->launch_time = g_get_real_time ();
  r->loop = g_main_loop_new (NULL, FALSE);
  return r;
}

void
stg_runner_free (StgRunner *r)
{
  if (r == NULL)
    return;
  stg_runner_logs_close_all (r);
  g_clear_pointer (&r->announcer, stg_serverset_free);
  for (guint i = 0; i < r->n_procs; i++)
    g_free (r->procs[i].cmdline);
  g_free (r->procs);
  g_clear_pointer (&r->regular, stg_thermos_planner_free);
  g_clear_pointer (&r->finalizing, stg_thermos_planner_free);
  g_clear_handle_id (&r->timer, g_source_remove);
  g_clear_handle_id (&r->sigchld_source, g_source_remove);
  for (guint i = 0; i < G_N_ELEMENTS (r->signal_sources); i++)
    g_clear_handle_id (&r->signal_sources[i], g_source_remove);
  if (r->sigchld_fd >= 0)
    close (r->sigchld_fd);
  g_clear_pointer (&r->loop, g_main_loop_unref);
  g_clear_pointer (&r->job, stg_thermos_job_free);
  g_clear_pointer (&r->ports, g_hash_table_unref);
  g_free (r->hostname);
  g_free (r->task_id);
  g_free (r->user);
  g_free (r->sandbox);
  g_free (r->shell);
  g_strfreev (r->environ);
  g_free (r);
}

gint
stg_runner_run (StgRunner *r, GError **error)
{
  r->sigchld_fd = stg_runner_tree_init (error);
  if (r->sigchld_fd < 0)
    return STG_RUNNER_EXIT_INTERNAL;
  if (!stg_runner_state_write (r, error))
    return STG_RUNNER_EXIT_INTERNAL;
  r->sigchld_source = g_unix_fd_add (r->sigchld_fd, G_IO_IN, on_sigchld, r);
  r->signal_sources[0] = g_unix_signal_add (SIGTERM, on_stop_signal, r);
  r->signal_sources[1] = g_unix_signal_add (SIGINT, on_stop_signal, r);
  r->signal_sources[2] = g_unix_signal_add (SIGUSR1, on_healthy_signal, r);
  g_message ("task %s (%s): %u processes in %s", r->task_id, r->job->task.name, r->n_procs,
             r->sandbox);
  pump (r);
  g_main_loop_run (r->loop);
  stg_runner_logs_close_all (r);
  save (r);
  return r->stage == STG_RUNNER_SUCCESS  ? STG_RUNNER_EXIT_SUCCESS
         : r->stage == STG_RUNNER_FAILED ? STG_RUNNER_EXIT_FAILED
                                         : STG_RUNNER_EXIT_KILLED;
}
