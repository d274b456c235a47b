/* jobfile_sidecar.c: sidecar set files (stagger-sidecar(5)) into a
 * SidecarSet.
 *
 *   {"cluster": "local", "name": "proxy",
 *    "selector": {"role": "www", "environment": "prod", "name": "*"},
 *    "image": "registry/proxy:2", "ports": ["proxy"], "socket_activation": true,
 *    "task": {"command": "...", "hot_upgrade": true, "hooks": {"post_update": "..."}},
 *    "health_check_config": {...},
 *    "update_config": {"max_unavailable": 1, "partition": 0, "max_failures": 2,
 *                      "rollback_on_failure": true, "paused": false}}
 *
 * The task and its health check are read as a job file's (jobfile_task.c)
 * into the sidecar's executor data, its templates checked against its own
 * ports (a sidecar reaches the task's through PORT_<NAME>). Errors name
 * the file, the JSON path and what was expected. Any thread.
 */
#include "config.h"

#include "cli/jobfile_private.h"

static const gchar *const sidecar_keys[] = { "cluster",       "name",
                                             "selector",      "image",
                                             "ports",         "socket_activation",
                                             "task",          "health_check_config",
                                             "update_config", NULL };
static const gchar *const selector_keys[] = { "role", "environment", "name", NULL };
static const gchar *const update_keys[] = { "max_unavailable",     "partition", "max_failures",
                                            "rollback_on_failure", "paused",    NULL };

void
stg_sidecar_file_free (StgSidecarFile *file)
{
  if (file == NULL)
    return;
  g_free (file->file);
  g_free (file->cluster);
  g_clear_object (&file->set);
  g_free (file);
}

static ApiSidecarSelector *
selector (const StgJfCtx *c, JsonObject *top, GError **error)
{
  JsonObject *o = NULL;
  g_autofree gchar *role = NULL, *environment = NULL, *name = NULL;

  if (!stg_jf_object (c, top, "", "selector", TRUE, &o, error) ||
      !stg_jf_check_keys (c, o, "selector", selector_keys, error) ||
      !stg_jf_string (c, o, "selector", "role", FALSE, &role, error) ||
      !stg_jf_string (c, o, "selector", "environment", FALSE, &environment, error) ||
      !stg_jf_string (c, o, "selector", "name", FALSE, &name, error))
    return NULL;
  return g_object_new (API_TYPE_SIDECAR_SELECTOR, "role", role ? role : "*", "environment",
                       environment ? environment : "*", "name", name ? name : "*", NULL);
}

static ApiSidecarUpdateSettings *
update_settings (const StgJfCtx *c, JsonObject *top, GError **error)
{
  JsonObject *o = NULL;
  gint64 unavailable = 1, partition = 0, failures = 2;
  gboolean rollback = TRUE, paused = FALSE;

  if (!stg_jf_object (c, top, "", "update_config", FALSE, &o, error) ||
      (o != NULL &&
       (!stg_jf_check_keys (c, o, "update_config", update_keys, error) ||
        !stg_jf_int (c, o, "update_config", "max_unavailable", 1, G_MAXINT32, &unavailable, NULL,
                     error) ||
        !stg_jf_int (c, o, "update_config", "partition", 0, G_MAXINT32, &partition, NULL, error) ||
        !stg_jf_int (c, o, "update_config", "max_failures", 0, G_MAXINT32, &failures, NULL,
                     error) ||
        !stg_jf_bool (c, o, "update_config", "rollback_on_failure", &rollback, NULL, error) ||
        !stg_jf_bool (c, o, "update_config", "paused", &paused, NULL, error))))
    return NULL;
  return g_object_new (API_TYPE_SIDECAR_UPDATE_SETTINGS, "maxUnavailable", (gint) unavailable,
                       "partition", (gint) partition, "maxFailures", (gint) failures,
                       "rollbackOnFailure", rollback, "paused", paused, NULL);
}

static ApiSidecar *
sidecar (const StgJfCtx *c, JsonObject *top, GError **error)
{
  g_autofree gchar *image = NULL;
  JsonArray *port_list = NULL;
  JsonObject *task = NULL, *health = NULL;
  gboolean activation = FALSE;

  if (!stg_jf_string (c, top, "", "image", TRUE, &image, error) ||
      !stg_jf_array (c, top, "", "ports", FALSE, &port_list, error) ||
      !stg_jf_bool (c, top, "", "socket_activation", &activation, NULL, error) ||
      !stg_jf_object (c, top, "", "task", TRUE, &task, error) ||
      !stg_jf_object (c, top, "", "health_check_config", FALSE, &health, error))
    return NULL;
  g_auto (GStrv) ports = stg_jf_port_names (c, port_list, "ports", error);
  g_autofree gchar *data = ports ? stg_jf_executor_data (c, task, health, ports, error) : NULL;
  if (data == NULL)
    return NULL;
  ApiSidecar *sc = g_object_new (API_TYPE_SIDECAR, "image", image, "executorData", data,
                                 "socketActivation", activation, NULL);
  for (guint i = 0; ports[i] != NULL; i++)
    g_ptr_array_add (sc->ports, g_strdup (ports[i]));
  return sc;
}

StgSidecarFile *
stg_sidecar_file_load (const gchar *path, GError **error)
{
  g_autofree gchar *text = NULL, *name = NULL, *cluster = NULL;
  gsize len = 0;
  StgJfCtx c = { path };

  if (!stg_jf_read_file (path, "a sidecar set file", &text, &len, error))
    return NULL;
  g_autoptr (JsonNode) root = stg_jf_parse_object (&c, text, len, error);
  JsonObject *top = root ? json_node_get_object (root) : NULL;
  if (top == NULL || !stg_jf_check_keys (&c, top, "", sidecar_keys, error) ||
      !stg_jf_string (&c, top, "", "cluster", FALSE, &cluster, error) ||
      !stg_jf_string (&c, top, "", "name", TRUE, &name, error))
    return NULL;
  g_autoptr (ApiSidecarSelector) sel = selector (&c, top, error);
  g_autoptr (ApiSidecar) sc = sel ? sidecar (&c, top, error) : NULL;
  g_autoptr (ApiSidecarUpdateSettings) settings = sc ? update_settings (&c, top, error) : NULL;
  if (settings == NULL)
    return NULL;
  StgSidecarFile *file = g_new0 (StgSidecarFile, 1);
  file->file = g_strdup (path);
  file->cluster = g_steal_pointer (&cluster);
  file->set = g_object_new (API_TYPE_SIDECAR_SET, "name", name, "selector", sel, "sidecar", sc,
                            "settings", settings, NULL);
  return file;
}
