/* webui_sidecar.c: the web UI's sidecar set pages: their data.
 *
 * GET /ui/api/sidecars answers every sidecar set: what it selects, its
 * newest version, its last update (from and to versions, status, reason,
 * settings) and how many of the instances that carry it run the update's
 * version. GET /ui/api/sidecar?name=NAME one set: the same, its versions,
 * each instance that carries it (host, the version serving and the one
 * asked for, status, failed starts, why it is not RUNNING, held back by
 * the partition, its container slots) and its events, newest last. Both
 * read through the engine, as getSidecarSets and getSidecarSetDetails do.
 * POST /ui/api/sidecar/NAME/{pause,resume,abort,rollback} (body empty or
 * {message}) acts on the set's update, and POST /ui/api/sidecar/NAME/apply
 * ({image?, executor_data?, message?}) rolls out a new version of its
 * sidecar, with the update page's rules (the session's CSRF token; a
 * viewer allowed the role the set selects, or every role for a role
 * pattern), as the sidecar calls of the API do.
 * Main-loop thread only.
 */
#include "config.h"

#include "webui/webui_private.h"

/* A set's summary, in the list and on its page. */
static void
add_summary (JsonBuilder *b, gconstpointer item)
{
  const ApiSidecarSetSummary *s = item;

  stg_webui_add_fields (b, s,
                        "name version from_version to_version status:update since_ms reason "
                        "instances updated user created_ms=createdTimestampMs inject_version");
  json_builder_set_member_name (b, "selector");
  json_builder_begin_object (b);
  stg_webui_add_fields (b, s->selector, "role environment name");
  json_builder_end_object (b);
  json_builder_set_member_name (b, "settings");
  json_builder_begin_object (b);
  stg_webui_add_fields (b, s->settings,
                        "max_unavailable partition max_failures rollback_on_failure paused");
  json_builder_end_object (b);
}

static guint
read_sets (StgWebUi *ui, StgHttpRequest *request G_GNUC_UNUSED, JsonBuilder *b, GError **error)
{
  g_autoptr (GPtrArray) sets = stg_engine_sidecar_sets (ui->ctx.engine, error);

  if (sets == NULL)
    return 500;
  json_builder_begin_object (b);
  stg_webui_add_list (b, "sets", sets, G_MAXUINT, add_summary);
  json_builder_end_object (b);
  return 200;
}

/* The job key "role/environment/name" and instance of @key. */
static void
add_instance_key (JsonBuilder *b, const ApiInstanceKey *key)
{
  g_autofree gchar *job = g_strdup_printf ("%s/%s/%s", key->jobKey->role, key->jobKey->environment,
                                           key->jobKey->name);

  member_string (b, "job", job);
  member_int (b, "instance", key->instanceId);
}

static void
add_instance (JsonBuilder *b, gconstpointer item)
{
  const ApiSidecarInstance *in = item;

  add_instance_key (b, in->instance);
  stg_webui_add_fields (b, in,
                        "host version want_version status:schedule failures reason held_back");
  stg_webui_add_records (b, "slots", in->slots, "name version container_id serving");
}

static void
add_event (JsonBuilder *b, gconstpointer item)
{
  const ApiSidecarEvent *e = item;

  stg_webui_add_fields (b, e, "timestamp_ms status:update message");
  member_string (b, "user", e->__isset_user ? e->user : NULL);
  if (e->__isset_instance)
    add_instance_key (b, e->instance);
}

static void
add_version (JsonBuilder *b, gconstpointer item)
{
  const ApiSidecarVersion *v = item;

  stg_webui_add_fields (b, v, "version created_ms=createdTimestampMs user");
  stg_webui_add_fields (b, v->sidecar, "image socket_activation executor_data");
}

static guint
read_set (StgWebUi *ui, StgHttpRequest *request, JsonBuilder *b, GError **error)
{
  const gchar *name = stg_http_request_query (request, "name");

  if (name == NULL || name[0] == '\0')
    return stg_webui_fail (error, 400, "query.name is missing");
  g_autoptr (ApiSidecarSetDetails) d = stg_engine_sidecar_set_details (ui->ctx.engine, name, error);
  if (d == NULL)
    return g_error_matches (*error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_NOT_FOUND)
               ? 404
               : stg_webui_store_status (*error);
  json_builder_begin_object (b);
  add_summary (b, d->summary);
  stg_webui_add_list (b, "versions", d->versions, G_MAXUINT, add_version);
  /* "instances" is the summary's count: the list is the set's members. */
  stg_webui_add_list (b, "members", d->instances, G_MAXUINT, add_instance);
  stg_webui_add_list (b, "events", d->events, G_MAXUINT, add_event);
  member_int (b, "now_ms", stg_clock_now_ms (ui->ctx.clock));
  json_builder_end_object (b);
  return 200;
}

/* ---- POST /ui/api/sidecar/NAME/ACTION ---------------------------------------------- */

static const struct
{
  const gchar *name;
  StgSidecarControl what;
} ACTIONS[] = {
  { "pause", STG_SIDECAR_PAUSE },
  { "resume", STG_SIDECAR_RESUME },
  { "abort", STG_SIDECAR_ABORT },
  { "rollback", STG_SIDECAR_ROLLBACK },
};

/* 200 when the viewer may change set @name: a viewer allowed its role, or
 * every role for a role pattern (which selects jobs of many roles). */
static guint
may_change (StgWebUi *ui, const gchar *name, GError **error)
{
  g_autofree gchar *role = NULL;
  guint status;

  if (!stg_engine_sidecar_role (ui->ctx.engine, name, &role, error))
    return stg_webui_engine_status (*error);
  if ((status = stg_webui_may_act (ui, role, error)) != 200)
    return status;
  if (role == NULL && !stg_auth_user_may (ui->ctx.auth, ui->who, NULL))
    return stg_webui_fail (error, 403,
                           "user %s may not change set %s: it selects a role pattern, which needs "
                           "a user of every role (roles = *)",
                           ui->who, name);
  return 200;
}

/* POST /ui/api/sidecar/NAME/apply {image?, executor_data?, message?}. */
static guint
apply_set (StgWebUi *ui, StgHttpRequest *request, const gchar *name, GError **error)
{
  static const gchar *const members[] = { "image", "executor_data", "message" };
  gchar *v[G_N_ELEMENTS (members)] = { NULL };
  guint status = stg_webui_body_strings (request, G_N_ELEMENTS (members), members, v, error);
  g_autofree gchar *image = v[0], *data = v[1], *message = v[2];

  if (status != 200)
    return status;
  if (image == NULL && data == NULL)
    return stg_webui_fail (error, 400, "give the new version's image or executor_data");
  if ((status = may_change (ui, name, error)) != 200)
    return status;
  if (!stg_engine_sidecar_revise (ui->ctx.engine, name, image, data, stg_webui_actor (ui), message,
                                  error))
    return stg_webui_engine_status (*error);
  return 200;
}

static guint
control_set (StgWebUi *ui, StgHttpRequest *request, GError **error)
{
  static const gchar *const members[] = { "message" };
  g_autofree gchar *name = NULL, *message = NULL;
  const gchar *action = NULL;
  guint a = 0, status;

  if (!stg_webui_path_control (request, "/ui/api/sidecar/", &name, &action, error))
    return 404;
  if (g_str_equal (action, "apply"))
    return apply_set (ui, request, name, error);
  while (a < G_N_ELEMENTS (ACTIONS) && !g_str_equal (ACTIONS[a].name, action))
    a++;
  if (a == G_N_ELEMENTS (ACTIONS))
    return stg_webui_fail (error, 404, "no such action");
  if ((status = stg_webui_body_strings (request, 1, members, &message, error)) != 200 ||
      (status = may_change (ui, name, error)) != 200)
    return status;
  if (!stg_engine_sidecar_control (ui->ctx.engine, name, ACTIONS[a].what, stg_webui_actor (ui),
                                   message, error))
    return stg_webui_engine_status (*error);
  return 200;
}

const StgWebUiRoute stg_webui_sidecar_routes[] = {
  { "/ui/api/sidecars", .read = read_sets },
  { "/ui/api/sidecar", .read = read_set },
  { "/ui/api/sidecar/", .control = control_set },
  { NULL },
};
