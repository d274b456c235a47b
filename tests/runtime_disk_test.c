/* runtime_disk_test.c: Check suite for the local runtime's disk limit,
 * with real processes and a real store: how a sandbox is measured
 * (allocated blocks, a hard link once, no symlink followed), a task that
 * writes past its diskMb fails in Aurora's words (its executor's
 * executor/common/resource_manager.py, the disk check) and is retried as any
 * failed task, and tasks under their limit or without one keep running.
 * The sandboxes are measured every 200 ms here. No ports.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/local/disk_usage.h"
#include "runtime_fixture.h"

#define MIB (1024 * 1024)

static void
setup (void)
{
  stg_rt_setup ();
  fx.disk_interval_ms = 200;
  make_runtime (30000, 30999);
}

/* ---- measuring a folder ------------------------------------------------------- */

/* Writes @mib MiB of zeros (real blocks, not a hole) to @path. */
static void
write_mib (const gchar *path, guint mib)
{
  g_autofree gchar *block = g_malloc0 (MIB);
  FILE *f = fopen (path, "w");

  ck_assert_ptr_nonnull (f);
  for (guint i = 0; i < mib; i++)
    ck_assert_uint_eq (fwrite (block, 1, MIB, f), MIB);
  ck_assert_int_eq (fclose (f), 0);
}

START_TEST (usage_counts_blocks_once_and_follows_no_symlink)
{
  g_autofree gchar *root = g_build_filename (fx.dir, "box", NULL);
  g_autofree gchar *deep = g_build_filename (root, "a", "b", "c", NULL);
  g_autofree gchar *outside = g_build_filename (fx.dir, "outside", NULL);
  g_autofree gchar *file = g_build_filename (deep, "two", NULL);
  g_autofree gchar *twin = g_build_filename (root, "again", NULL);
  g_autofree gchar *sym = g_build_filename (root, "elsewhere", NULL);
  g_autoptr (GError) error = NULL;

  ck_assert_int_eq (g_mkdir_with_parents (deep, 0700), 0);
  ck_assert_int_eq (g_mkdir_with_parents (outside, 0700), 0);
  write_mib (file, 2);
  ck_assert_int_eq (link (file, twin), 0);
  g_autofree gchar *big = g_build_filename (outside, "big", NULL);
  write_mib (big, 8);
  ck_assert_int_eq (symlink (outside, sym), 0);

  gint64 used = stg_disk_usage (root, NULL, &error);
  /* Two MiB, the folders and the symlink: the hard link is the same
   * blocks, and what the symlink points at is not the folder's. */
  ck_assert_msg (used >= 2 * MIB && used < 2 * MIB + 256 * 1024, "used %" G_GINT64_FORMAT, used);

  /* A symlink is no root either, nor a folder that is not there. */
  ck_assert_int_eq (stg_disk_usage (sym, NULL, &error), -1);
  g_clear_error (&error);
  g_autofree gchar *none = g_build_filename (fx.dir, "none", NULL);
  ck_assert_int_eq (stg_disk_usage (none, NULL, &error), -1);
  ck_assert (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND));
  g_clear_error (&error);

  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  g_cancellable_cancel (cancel);
  ck_assert_int_eq (stg_disk_usage (root, cancel, &error), -1);
  ck_assert (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED));
}
END_TEST

/* ---- the limit -------------------------------------------------------------- */

/* A config of job www/prod/@name running @command, reserving @disk_mb of
 * disk (0: none said), failing at most @max_failures times. */
static ApiTaskConfig *
disk_config (const gchar *name, const gchar *command, gint64 disk_mb, gint max_failures)
{
  g_autofree gchar *data = g_strdup_printf ("{\"command\": \"%s\"}", command);
  ApiTaskConfig *t = config (name, data, "", FALSE);

  if (disk_mb > 0)
    g_hash_table_add (t->resources, g_object_new (API_TYPE_RESOURCE, "diskMb", disk_mb, NULL));
  g_object_set (t, "maxTaskFailures", max_failures, NULL);
  return t;
}

/* @text says, in Aurora's words, that @reserved bytes were reserved and
 * more were used (how much more depends on when the sandbox was measured). */
static void
assert_disk_message (const gchar *text, gint64 reserved)
{
  const gchar *m = strstr (text, "Disk limit exceeded.  Reserved ");
  gint64 r = 0, u = 0;

  ck_assert_msg (m != NULL, "no disk limit message in:\n%s", text);
  ck_assert_int_eq (sscanf (m,
                            "Disk limit exceeded.  Reserved %" G_GINT64_FORMAT
                            " bytes vs used %" G_GINT64_FORMAT " bytes.",
                            &r, &u),
                    2);
  ck_assert_int_eq (r, reserved);
  ck_assert_msg (u > reserved, "used %" G_GINT64_FORMAT, u);
  g_autofree gchar *exact = g_strdup_printf ("Disk limit exceeded.  Reserved %" G_GINT64_FORMAT
                                             " bytes vs used %" G_GINT64_FORMAT " bytes.",
                                             r, u);
  ck_assert (g_str_has_prefix (m, exact));
}

/* A task that reserves 16 MiB and writes 40 into its sandbox fails with
 * Aurora's message, each time it runs (maxTaskFailures 2: twice), and
 * then stays failed. Without the limit it would sleep on, RUNNING. */
START_TEST (over_its_disk_fails)
{
  g_autoptr (ApiTaskConfig) t = disk_config ("hog",
                                             "dd if=/dev/zero of=big bs=1M count=40; sleep 60", 16,
                                             2);
  gint64 c;
  gint64 job = make_job (t, 1, &c);

  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_FAILED, c, 2, 20000);
  StgTaskObservation o = observe (job, 0);
  ck_assert_uint_eq (o.failures, 2);
  assert_disk_message (o.cause, 16 * MIB);
  g_autofree gchar *ev = events (job, 0);
  assert_disk_message (ev, 16 * MIB);
  /* The FAILED event says it alone, as Aurora's taskEvents do. */
  g_autofree gchar *failed = g_strdup_printf ("%d: Disk limit exceeded.",
                                              API_SCHEDULE_STATUS_FAILED);
  ck_assert_msg (strstr (ev, failed) != NULL, "%s", ev);
  spin (1500);
  ck_assert_int_eq (observe (job, 0).phase, STG_TASK_FAILED);
  ck_assert_uint_eq (observe (job, 0).failures, 2);
}
END_TEST

/* Under its limit, or with no diskMb at all, a task keeps running however
 * often its sandbox is measured. */
START_TEST (under_its_disk_or_without_a_limit_runs_on)
{
  g_autoptr (ApiTaskConfig) small = disk_config ("small",
                                                 "dd if=/dev/zero of=big bs=1M count=8; sleep 60",
                                                 64, 1);
  g_autoptr (ApiTaskConfig) unlimited =
      disk_config ("free", "dd if=/dev/zero of=big bs=1M count=40; sleep 60", 0, 1);
  gint64 c1, c2;
  gint64 j1 = make_job (small, 1, &c1), j2 = make_job (unlimited, 1, &c2);

  apply (j1, 0, c1);
  apply (j2, 0, c2);
  wait_for (j1, 0, STG_TASK_RUNNING, c1, 0, 10000);
  wait_for (j2, 0, STG_TASK_RUNNING, c2, 0, 10000);
  spin (2000); /* ten measures */
  ck_assert_int_eq (observe (j1, 0).phase, STG_TASK_RUNNING);
  ck_assert_uint_eq (observe (j1, 0).failures, 0);
  ck_assert_int_eq (observe (j2, 0).phase, STG_TASK_RUNNING);
  ck_assert_uint_eq (observe (j2, 0).failures, 0);
}
END_TEST

static Suite *
runtime_disk_suite (void)
{
  Suite *s = suite_create ("runtime_disk");
  TCase *tc = tcase_create ("disk");

  tcase_set_timeout (tc, 60);
  tcase_add_checked_fixture (tc, setup, stg_rt_teardown);
  tcase_add_test (tc, usage_counts_blocks_once_and_follows_no_symlink);
  tcase_add_test (tc, over_its_disk_fails);
  tcase_add_test (tc, under_its_disk_or_without_a_limit_runs_on);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (runtime_disk_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
