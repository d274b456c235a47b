/* webui_session.c: who looks at the web UI and what they may do: the
 * browser's session and its CSRF token, credentials (HTTP Basic, checked
 * by auth_check.c), the viewer's right to act on a role's jobs, and the
 * /ui/api/session and /ui/login routes.
 *
 * A CSRF token is an HMAC of the browser's session cookie under a secret
 * of this process, so it is good for one session only and needs no table;
 * a page from another site can neither read it nor set the X-Stagger-CSRF
 * header. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "webui/webui_private.h"

/* The cookie naming a browser's session; /ui/api/session sets it. */
#define SESSION_COOKIE "stagger_session"

/* The token of session @id. */
static gchar *
csrf_token (StgWebUi *ui, const gchar *id)
{
  return g_compute_hmac_for_string (G_CHECKSUM_SHA256, (const guchar *) ui->secret,
                                    strlen (ui->secret), id, -1);
}

/* A session id as this server makes them: 32 hex digits. */
static gboolean
session_id_valid (const gchar *id)
{
  if (id == NULL || strlen (id) != 32)
    return FALSE;
  for (const gchar *p = id; *p; p++)
    if (!g_ascii_isxdigit (*p))
      return FALSE;
  return TRUE;
}

/* Whether the request carries its session's token in X-Stagger-CSRF. */
static gboolean
csrf_ok (StgWebUi *ui, StgHttpRequest *request)
{
  const gchar *id = stg_http_request_cookie (request, SESSION_COOKIE);
  const gchar *token = stg_http_request_header (request, "X-Stagger-CSRF");

  if (!session_id_valid (id) || token == NULL)
    return FALSE;
  g_autofree gchar *want = csrf_token (ui, id);
  gsize n = strlen (want);
  if (strlen (token) != n)
    return FALSE;
  guchar diff = 0;
  for (gsize i = 0; i < n; i++) /* the same time whatever the first wrong byte */
    diff |= (guchar) (want[i] ^ token[i]);
  return diff == 0;
}

/* ---- the viewer's rights ------------------------------------------------------------ */

gboolean
stg_webui_sign_in (StgWebUi *ui, StgHttpRequest *request, StgHttpResponse *response)
{
  g_autoptr (GError) error = NULL;

  if (!stg_auth_enabled (ui->ctx.auth))
    return TRUE;
  const gchar *header = stg_http_request_header (request, "Authorization");
  ui->who = header ? stg_auth_check_header (ui->ctx.auth, header, stg_http_request_peer (request),
                                            &error)
                   : NULL;
  if (ui->who == NULL && (header != NULL || stg_auth_read_requires_auth (ui->ctx.auth)))
    {
      stg_webui_send_error (response, 401, error ? error->message : "authentication required");
      return FALSE;
    }
  return TRUE;
}

const gchar *
stg_webui_actor (StgWebUi *ui)
{
  return ui->who != NULL ? ui->who : "web";
}

guint
stg_webui_may_act (StgWebUi *ui, const gchar *role, GError **error)
{
  if (!stg_auth_enabled (ui->ctx.auth))
    return 200;
  if (ui->who == NULL)
    return stg_webui_fail (error, 401, "sign in to change updates");
  if (role != NULL && !stg_auth_user_may (ui->ctx.auth, ui->who, role))
    return stg_webui_fail (error, 403, "user %s may not change jobs of role %s", ui->who, role);
  return 200;
}

gboolean
stg_webui_control_allowed (StgWebUi *ui, StgHttpRequest *request, StgHttpResponse *response)
{
  g_autoptr (GError) error = NULL;
  guint status;

  if (!g_str_equal (stg_http_request_method (request), "POST"))
    {
      stg_http_response_header (response, "Allow", "POST");
      stg_webui_send_error (response, 405, "use POST");
      return FALSE;
    }
  if (!csrf_ok (ui, request))
    {
      stg_webui_send_error (response, 403,
                            "missing or wrong X-Stagger-CSRF token for this session");
      return FALSE;
    }
  status = stg_webui_may_act (ui, NULL, &error);
  if (status != 200)
    stg_webui_send_error (response, status, error->message);
  return status == 200;
}

/* ---- routes ------------------------------------------------------------------------- */

/* The request's session id, or a new one set as a cookie on @response. */
static gchar *
session_id (StgHttpRequest *request, StgHttpResponse *response)
{
  const gchar *id = stg_http_request_cookie (request, SESSION_COOKIE);

  if (session_id_valid (id))
    return g_strdup (id);
  /* 122 random bits: a UUID's hex digits. */
  g_autofree gchar *uuid = g_uuid_string_random ();
  gchar *fresh = g_new0 (gchar, 33);
  for (gsize i = 0, n = 0; uuid[i] != '\0'; i++)
    if (uuid[i] != '-')
      fresh[n++] = uuid[i];
  g_autofree gchar *cookie = g_strdup_printf ("%s=%s; Path=/; HttpOnly; SameSite=Strict",
                                              SESSION_COOKIE, fresh);
  stg_http_response_header (response, "Set-Cookie", cookie);
  return fresh;
}

/* /ui/api/session: the cluster, staggerd's version, the viewer and the
 * session's CSRF token. */
static void
route_session (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (JsonBuilder) b = json_builder_new ();

  if (!stg_webui_only_get (request, response, TRUE))
    return;
  g_autofree gchar *id = session_id (request, response);
  g_autofree gchar *csrf = csrf_token (ui, id);
  gboolean auth = stg_auth_enabled (ui->ctx.auth);
  json_builder_begin_object (b);
  member_string (b, "cluster", ui->ctx.cluster);
  member_string (b, "version", STG_VERSION);
  member_string (b, "user", ui->who);
  member_bool (b, "auth", auth);
  member_bool (b, "can_act", !auth || ui->who != NULL);
  member_string (b, "csrf", csrf);
  json_builder_end_object (b);
  stg_webui_send_built (response, b);
}

/* /ui/login: asks the browser for credentials until they are good. */
static void
route_login (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (GError) error = NULL;

  if (!stg_webui_only_get (request, response, TRUE))
    return;
  guint status = stg_webui_may_act (ui, NULL, &error);
  if (status != 200)
    {
      stg_webui_send_error (response, status, error->message);
      return;
    }
  stg_http_response_header (response, "Location", "/");
  stg_http_response_text (response, 303, "signed in\n");
}

const StgWebUiRoute stg_webui_session_routes[] = {
  { "/ui/api/session", .raw = route_session },
  { "/ui/login", .raw = route_login },
  { NULL },
};
