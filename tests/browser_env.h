/* browser_env.h: Node, headless Chromium and playwright-core for the
 * suites that drive a browser: the scripts of tests/browser/ copied into
 * a folder of the build tree with their node_modules. Test processes only.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Makes @env (a folder name under tests/ of the build tree) hold
 * package.json, package-lock.json, chromium.mjs (what the scripts share)
 * and @scripts (NULL-terminated names in tests/browser/), runs `npm ci`
 * there when playwright-core is missing, and returns the folder's path.
 * Fails the test, saying what to install, when Chromium, node or npm is
 * missing. */
gchar *stg_browser_env_prepare (const gchar *env, const gchar *const *scripts);

/* Runs `node SCRIPT ARGS...` (NULL-terminated) from @env_dir and returns
 * its exit status; *@last_line gets the last line it printed (its result)
 * and *@output everything (both nullable). */
gint stg_browser_env_run (const gchar *env_dir, gchar **last_line, gchar **output,
                          const gchar *script, ...) G_GNUC_NULL_TERMINATED;

/* The same in two halves, for a script that runs while the test goes on:
 * starts it, and waits for its end (taking @process). */
GSubprocess *stg_browser_env_start (const gchar *env_dir, const gchar *script,
                                    ...) G_GNUC_NULL_TERMINATED;
gint stg_browser_env_finish (GSubprocess *process, gchar **last_line, gchar **output);

G_END_DECLS
