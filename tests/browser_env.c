/* browser_env.c: a browser environment for test suites (see
 * browser_env.h). Test processes only. */
#include "config.h"

#include <check.h>
#include <gio/gio.h>
#include <string.h>

#include "browser_env.h"

/* Copies @name from tests/browser/ of the source tree to @env_dir. */
static void
copy_in (const gchar *env_dir, const gchar *name)
{
  g_autofree gchar *from = g_build_filename (STG_SRCDIR, "tests", "browser", name, NULL);
  g_autofree gchar *to = g_build_filename (env_dir, name, NULL);
  g_autofree gchar *text = NULL;
  gsize len = 0;
  g_autoptr (GError) error = NULL;

  ck_assert_msg (g_file_get_contents (from, &text, &len, &error), "%s", error ? error->message : "");
  ck_assert_msg (g_file_set_contents (to, text, (gssize) len, &error), "%s", error ? error->message : "");
}

gchar *
stg_browser_env_prepare (const gchar *env, const gchar *const *scripts)
{
  g_autoptr (GError) error = NULL;

  ck_assert_msg (g_file_test ("/usr/bin/chromium", G_FILE_TEST_IS_EXECUTABLE) || g_getenv ("CHROMIUM"),
                 "no /usr/bin/chromium: scripts/install-deps.sh installs it");
  g_autofree gchar *npm = g_find_program_in_path ("npm");
  ck_assert_msg (npm != NULL, "no npm: scripts/install-deps.sh installs it");
  gchar *env_dir = g_build_filename (STG_BUILDDIR, "tests", env, NULL);
  g_mkdir_with_parents (env_dir, 0755);
  copy_in (env_dir, "package.json");
  copy_in (env_dir, "package-lock.json");
  copy_in (env_dir, "chromium.mjs");
  for (guint i = 0; scripts[i] != NULL; i++)
    copy_in (env_dir, scripts[i]);
  g_autofree gchar *module = g_build_filename (env_dir, "node_modules", "playwright-core", "package.json",
                                               NULL);
  if (g_file_test (module, G_FILE_TEST_EXISTS))
    return env_dir;
  const gchar *argv[] = { npm, "ci", "--no-audit", "--no-fund", "--loglevel=error", NULL };
  g_autofree gchar *out = NULL, *err = NULL;
  gint status = 0;
  ck_assert_msg (g_spawn_sync (env_dir, (gchar **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                               &status, &error), "cannot run npm: %s", error ? error->message : "");
  ck_assert_msg (g_spawn_check_wait_status (status, NULL),
                 "npm ci in %s failed (is the npm registry reachable?):\n%s", env_dir, err);
  return env_dir;
}

static GSubprocess *
start_v (const gchar *env_dir, const gchar *script, va_list ap)
{
  g_autofree gchar *node = g_find_program_in_path ("node");
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;

  ck_assert_msg (node != NULL, "no node: scripts/install-deps.sh installs it");
  g_ptr_array_add (argv, g_strdup (node));
  g_ptr_array_add (argv, g_build_filename (env_dir, script, NULL));
  for (const gchar *a = va_arg (ap, const gchar *); a != NULL; a = va_arg (ap, const gchar *))
    g_ptr_array_add (argv, g_strdup (a));
  g_ptr_array_add (argv, NULL);
  GSubprocess *p = g_subprocess_newv ((const gchar *const *) argv->pdata,
                                      G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  ck_assert_msg (p != NULL, "cannot run node: %s", error ? error->message : "");
  return p;
}

GSubprocess *
stg_browser_env_start (const gchar *env_dir, const gchar *script, ...)
{
  va_list ap;

  va_start (ap, script);
  GSubprocess *p = start_v (env_dir, script, ap);
  va_end (ap);
  return p;
}

gint
stg_browser_env_finish (GSubprocess *p, gchar **last_line, gchar **output)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *out = NULL;

  ck_assert_msg (g_subprocess_communicate_utf8 (p, NULL, NULL, &out, NULL, &error), "%s",
                 error ? error->message : "");
  g_strstrip (out);
  const gchar *last = strrchr (out, '\n');
  if (last_line != NULL)
    *last_line = g_strdup (last ? last + 1 : out);
  if (output != NULL)
    *output = g_steal_pointer (&out);
  gint status = g_subprocess_get_exit_status (p);
  g_object_unref (p);
  return status;
}

gint
stg_browser_env_run (const gchar *env_dir, gchar **last_line, gchar **output, const gchar *script,
                     ...)
{
  va_list ap;

  va_start (ap, script);
  GSubprocess *p = start_v (env_dir, script, ap);
  va_end (ap);
  return stg_browser_env_finish (p, last_line, output);
}
