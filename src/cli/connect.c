/* connect.c: resolving the daemon's URL (option, environment, clusters
 * files, default) and the credentials (option, environment, credentials
 * file with its permissions checked). One thread.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/connect.h"
#include "common/json_check.h"
#include "common/strings.h"
#include "zk/zk.h"

static const gchar *
nonempty (const gchar *s)
{
  return s != NULL && s[0] != '\0' ? s : NULL;
}

static gchar *prompt_tty (const gchar *question, gpointer data);

void
stg_cli_sources_init (StgCliSources *s)
{
  memset (s, 0, sizeof *s);
  s->env_url = nonempty (g_getenv ("STAGGER_URL"));
  s->env_token = nonempty (g_getenv ("STAGGER_TOKEN"));
  s->env_ca_file = nonempty (g_getenv ("STAGGER_CA_FILE"));
  s->env_leader_wait = nonempty (g_getenv ("STAGGER_LEADER_WAIT"));
  s->leader_wait_option = NAN;
  s->owned_dir = g_build_filename (g_get_user_config_dir (), "stagger", NULL);
  s->user_config_dir = s->owned_dir;
  s->system_config_dir = STG_CLI_SYSTEM_CONFIG_DIR;
  s->prompt = prompt_tty;
}

void
stg_cli_sources_clear (StgCliSources *s)
{
  g_clear_pointer (&s->owned_dir, g_free);
}

void
stg_cli_target_free (StgCliTarget *t)
{
  if (t == NULL)
    return;
  g_free (t->base_url);
  g_free (t->api_url);
  g_free (t->url_from);
  g_free (t->user);
  if (t->password != NULL)
    memset (t->password, 0, strlen (t->password));
  g_free (t->password);
  g_free (t->token);
  g_free (t->credentials_from);
  g_free (t->ca_file);
  g_strfreev (t->replicas);
  g_free (t->zk_ensemble);
  g_free (t->zk_path);
  g_free (t);
}

/* ---- the URL ------------------------------------------------------------ */

static gboolean
set_url (StgCliTarget *t, const gchar *url, const gchar *from, GError **error)
{
  g_autoptr (GUri) uri = g_uri_parse (url, G_URI_FLAGS_NONE, NULL);
  const gchar *scheme = uri ? g_uri_get_scheme (uri) : NULL;

  if (uri == NULL || scheme == NULL ||
      (g_ascii_strcasecmp (scheme, "http") != 0 && g_ascii_strcasecmp (scheme, "https") != 0) ||
      g_uri_get_host (uri) == NULL || g_uri_get_host (uri)[0] == '\0' ||
      g_uri_get_query (uri) != NULL || g_uri_get_fragment (uri) != NULL)
    {
      g_set_error (error, STG_CLI_ERROR, g_str_equal (from, "--url") ? STG_CLI_ERROR_USAGE : STG_CLI_ERROR_CONFIG,
                   "bad URL '%s' (from %s): expected http://HOST:PORT or https://HOST:PORT", url, from);
      return FALSE;
    }
  t->base_url = g_strdup (url);
  gsize n = strlen (t->base_url);
  while (n > 0 && t->base_url[n - 1] == '/')
    t->base_url[--n] = '\0';
  /* A URL that already ends in /api is taken as the endpoint itself. */
  if (g_str_has_suffix (t->base_url, "/api"))
    {
      t->api_url = g_strdup (t->base_url);
      t->base_url[n - strlen ("/api")] = '\0';
    }
  else
    t->api_url = g_strconcat (t->base_url, "/api", NULL);
  t->url_from = g_strdup (from);
  return TRUE;
}

/* Parses the JSON file at @path into a new root node. */
static JsonNode *
load_json (const gchar *path, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) local = NULL;
  g_autofree gchar *text = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &text, &len, &local) ||
      !stg_json_load (parser, text, (gssize) len, &local))
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG, "%s: %s", path, local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG, "%s: the file is empty", path);
      return NULL;
    }
  return json_node_copy (root);
}

static const gchar *
string_member (JsonObject *o, const gchar *name)
{
  JsonNode *n = json_object_get_member (o, name);

  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
    return NULL;
  return nonempty (json_node_get_string (n));
}

/* Sets @t's URLs from @given, the URLs of a cluster's replicas (from
 * @from): all kept in @t->replicas; the first is where to start. */
static gboolean
set_replicas (StgCliTarget *t, GPtrArray *given, const gchar *from, GError **error)
{
  g_autoptr (GPtrArray) urls = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < given->len; i++)
    {
      g_autoptr (StgCliTarget) one = g_new0 (StgCliTarget, 1);
      if (!set_url (one, given->pdata[i], from, error))
        return FALSE;
      g_ptr_array_add (urls, g_steal_pointer (&one->base_url));
    }
  if (!set_url (t, given->pdata[0], from, error))
    return FALSE;
  /* One replica is a list too when ZooKeeper may name another later. */
  if (urls->len > 1 || t->zk_ensemble != NULL)
    {
      g_ptr_array_add (urls, NULL);
      t->replicas = (gchar **) g_ptr_array_free (g_steal_pointer (&urls), FALSE);
    }
  return TRUE;
}

/* Sets @t's URL from @n: one URL, or a list of a cluster's replicas. */
static gboolean
set_urls (StgCliTarget *t, JsonNode *n, const gchar *path, const gchar *cluster, GError **error)
{
  g_autoptr (GPtrArray) urls = g_ptr_array_new ();

  if (n != NULL && JSON_NODE_HOLDS_ARRAY (n))
    for (guint i = 0; i < json_array_get_length (json_node_get_array (n)); i++)
      {
        JsonNode *e = json_array_get_element (json_node_get_array (n), i);
        if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_STRING)
          {
            g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG,
                         "%s: the cluster '%s' lists a URL that is not a string", path, cluster);
            return FALSE;
          }
        g_ptr_array_add (urls, (gpointer) json_node_get_string (e));
      }
  else if (n != NULL && JSON_NODE_HOLDS_VALUE (n) &&
           json_node_get_value_type (n) == G_TYPE_STRING &&
           nonempty (json_node_get_string (n)) != NULL)
    return set_url (t, json_node_get_string (n), path, error);
  if (urls->len == 0)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG,
                   "%s: the cluster '%s' has no \"url\"", path, cluster);
      return FALSE;
    }
  return set_replicas (t, urls, path, error);
}

/* A member's endpoint as a base URL: https, else http, else the service
 * endpoint (as Aurora's client picks it). */
static gchar *
member_url (const gchar *data)
{
  static const gchar *const names[] = { "https", "http", NULL };
  g_autofree gchar *host = NULL;
  gint port = 0;

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (stg_zk_member_endpoint (data, names[i], &host, &port))
      {
        gboolean v6 = strchr (host, ':') != NULL;
        return g_strdup_printf ("%s://%s%s%s:%d", i == 0 ? "https" : "http", v6 ? "[" : "", host,
                                v6 ? "]" : "", port);
      }
  return NULL;
}

/* The base URLs of the schedulers announced in the ServerSet at @path of
 * ZooKeeper @ensemble, the leader first, as Aurora's client reads them;
 * waits up to @wait_ms for one. A new NULL-terminated list, or NULL and
 * @error. */
static gchar **
zk_find (const gchar *ensemble, const gchar *path, guint wait_ms, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) wait_ms * 1000;

  for (;;)
    {
      g_autoptr (GError) local = NULL;
      g_autoptr (GPtrArray) members = stg_zk_members_read (ensemble, NULL, path,
                                                           (gint) MAX (wait_ms, 2000u), &local);
      g_autoptr (GStrvBuilder) urls = g_strv_builder_new ();
      guint n = 0;
      for (guint i = 0; members != NULL && i < members->len; i++)
        {
          const StgZkMember *m = g_ptr_array_index (members, i);
          g_autofree gchar *url = member_url (m->data);
          if (url != NULL)
            g_strv_builder_add (urls, url), n++;
        }
      if (n > 0)
        return g_strv_builder_end (urls);
      if (g_get_monotonic_time () >= deadline)
        {
          if (local != NULL)
            g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG, "%s", local->message);
          else
            g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG,
                         "no scheduler is announced at %s in ZooKeeper %s (waited %u ms)", path,
                         ensemble, wait_ms);
          return NULL;
        }
      g_usleep (200 * 1000);
    }
}

gchar **
stg_cli_target_refind (gpointer target)
{
  StgCliTarget *t = target;

  if (t->zk_ensemble == NULL)
    return NULL;
  return zk_find (t->zk_ensemble, t->zk_path, 0, NULL);
}

/* A clusters file entry with Aurora's "zk", "zk_port" (2181) and
 * "scheduler_zk_path": the leader announced there. */
static gboolean
zk_cluster (StgCliTarget *t, JsonObject *entry, const gchar *path, const gchar *cluster,
            GError **error)
{
  const gchar *zk = string_member (entry, "zk");
  const gchar *zk_path = string_member (entry, "scheduler_zk_path");
  JsonNode *port_node = json_object_get_member (entry, "zk_port");
  gint64 port = 2181;
  g_autoptr (GError) local = NULL;

  if (zk == NULL || zk_path == NULL)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG,
                   "%s: the cluster '%s' names \"zk\" (a string of host names) but %s", path,
                   cluster, zk == NULL ? "it is not a string" : "no \"scheduler_zk_path\"");
      return FALSE;
    }
  if (port_node != NULL)
    {
      if (!JSON_NODE_HOLDS_VALUE (port_node) ||
          json_node_get_value_type (port_node) != G_TYPE_INT64 ||
          (port = json_node_get_int (port_node)) < 1 || port > 65535)
        {
          g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG,
                       "%s: the cluster '%s': \"zk_port\" is a number from 1 to 65535", path,
                       cluster);
          return FALSE;
        }
    }
  g_auto (GStrv) hosts = g_strsplit (zk, ",", -1);
  g_autoptr (GString) ensemble = g_string_new (NULL);
  for (guint i = 0; hosts[i] != NULL; i++)
    g_string_append_printf (ensemble, "%s%s:%d", i ? "," : "", g_strstrip (hosts[i]), (gint) port);
  if (!stg_zk_ensemble_check (ensemble->str, &local) || !stg_zk_path_check (zk_path, &local))
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG, "%s: the cluster '%s': %s", path,
                   cluster, local->message);
      return FALSE;
    }
  t->zk_ensemble = g_string_free (g_steal_pointer (&ensemble), FALSE);
  t->zk_path = g_strdup (zk_path);
  g_auto (GStrv) urls = zk_find (t->zk_ensemble, t->zk_path, t->leader_wait_ms, &local);
  if (urls == NULL)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG, "%s: the cluster '%s': %s", path,
                   cluster, local->message);
      return FALSE;
    }
  g_autoptr (GPtrArray) list = g_ptr_array_new ();
  for (guint i = 0; urls[i] != NULL; i++)
    g_ptr_array_add (list, urls[i]);
  return set_replicas (t, list, path, error);
}

/* Looks @cluster up in the clusters file at @path. These forms work:
 *   {"local": "http://127.0.0.1:8081", "prod": {"url": "...", "ca_file": "..."}}
 *   {"ha": ["http://a:8081", "http://b:8081"]}   (replicas: the CLI finds the leader)
 *   [{"name": "local", "url": "..."}, ...]   (Aurora's, with scheduler_uri too)
 *   [{"name": "prod", "zk": "zk1,zk2", "scheduler_zk_path": "/aurora/scheduler"}]
 *                                  (Aurora's: the leader found in ZooKeeper)
 * A "url" may be a list of replicas' URLs in each. *@found stays FALSE
 * when the file or the entry is absent. */
static gboolean
cluster_from_file (const gchar *path, const gchar *cluster, StgCliTarget *t, gboolean *found,
                   GError **error)
{
  JsonObject *entry = NULL;
  JsonNode *url = NULL;

  *found = FALSE;
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    return TRUE;
  g_autoptr (JsonNode) root = load_json (path, error);
  if (root == NULL)
    return FALSE;
  if (JSON_NODE_HOLDS_OBJECT (root))
    {
      JsonNode *n = json_object_get_member (json_node_get_object (root), cluster);
      if (n == NULL)
        return TRUE;
      if (JSON_NODE_HOLDS_OBJECT (n))
        entry = json_node_get_object (n);
      else
        url = n;
    }
  else if (JSON_NODE_HOLDS_ARRAY (root))
    {
      JsonArray *a = json_node_get_array (root);
      for (guint i = 0; i < json_array_get_length (a) && entry == NULL; i++)
        {
          JsonNode *e = json_array_get_element (a, i);
          if (JSON_NODE_HOLDS_OBJECT (e) &&
              g_strcmp0 (string_member (json_node_get_object (e), "name"), cluster) == 0)
            entry = json_node_get_object (e);
        }
      if (entry == NULL)
        return TRUE;
    }
  else
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG,
                   "%s: expected an object mapping cluster names to URLs, or a list of "
                   "{\"name\": ..., \"url\": ...}", path);
      return FALSE;
    }

  if (entry != NULL)
    {
      url = json_object_get_member (entry, "url");
      if (url == NULL)
        url = json_object_get_member (entry, "scheduler_uri");
      if (url == NULL && json_object_has_member (entry, "zk"))
        {
          *found = TRUE;
          return zk_cluster (t, entry, path, cluster, error);
        }
      const gchar *ca = string_member (entry, "ca_file");
      if (ca != NULL)
        {
          /* Relative to the clusters file. */
          g_autofree gchar *dir = g_path_get_dirname (path);
          t->ca_file = g_path_is_absolute (ca) ? g_strdup (ca) : g_build_filename (dir, ca, NULL);
        }
    }
  *found = TRUE;
  return set_urls (t, url, path, cluster, error);
}

/* The names of the clusters file at @path (either form), sorted. */
static GPtrArray *
file_clusters (const gchar *path, GError **error)
{
  g_autoptr (JsonNode) root = load_json (path, error);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

  if (root == NULL)
    return NULL;
  if (JSON_NODE_HOLDS_OBJECT (root))
    {
      g_autoptr (GList) members = json_object_get_members (json_node_get_object (root));
      for (GList *l = members; l != NULL; l = l->next)
        g_ptr_array_add (names, g_strdup (l->data));
    }
  else if (JSON_NODE_HOLDS_ARRAY (root))
    for (guint i = 0; i < json_array_get_length (json_node_get_array (root)); i++)
      {
        JsonNode *e = json_array_get_element (json_node_get_array (root), i);
        const gchar *name = JSON_NODE_HOLDS_OBJECT (e)
                                ? string_member (json_node_get_object (e), "name")
                                : NULL;
        if (name != NULL)
          g_ptr_array_add (names, g_strdup (name));
      }
  g_ptr_array_sort (names, stg_compare_string_ptrs);
  return g_steal_pointer (&names);
}

/* A command that names no cluster: the one cluster of the first clusters
 * file there is (*@cluster), NULL when there is no file or it is empty, an
 * error when it lists several. */
static gboolean
sole_cluster (const StgCliSources *s, gchar **cluster, GError **error)
{
  const gchar *dirs[] = { s->user_config_dir, s->system_config_dir };

  *cluster = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      g_autofree gchar *path = dirs[i] ? g_build_filename (dirs[i], "clusters.json", NULL) : NULL;
      if (path == NULL || !g_file_test (path, G_FILE_TEST_EXISTS))
        continue;
      g_autoptr (GPtrArray) names = file_clusters (path, error);
      if (names == NULL)
        return FALSE;
      if (names->len > 1)
        {
          g_ptr_array_add (names, NULL);
          g_autofree gchar *list = g_strjoinv (", ", (gchar **) names->pdata);
          g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
                       "%s lists several clusters (%s): name one in the command (its CLUSTER "
                       "argument, or CLUSTER/ROLE/ENV/NAME), or give --url",
                       path, list);
          return FALSE;
        }
      *cluster = names->len == 1 ? g_strdup (names->pdata[0]) : NULL;
      return TRUE;
    }
  return TRUE;
}

static gboolean
resolve_url (const StgCliSources *s, const gchar *cluster, StgCliTarget *t, GError **error)
{
  if (s->url_options != NULL && s->url_options[0] != NULL)
    {
      g_autoptr (GPtrArray) urls = g_ptr_array_new ();
      for (guint i = 0; s->url_options[i] != NULL; i++)
        g_ptr_array_add (urls, (gpointer) s->url_options[i]);
      return set_replicas (t, urls, "--url", error);
    }
  if (s->env_url != NULL)
    return set_url (t, s->env_url, "STAGGER_URL", error);
  if (cluster != NULL)
    {
      const gchar *dirs[] = { s->user_config_dir, s->system_config_dir };
      for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
        {
          gboolean found = FALSE;
          if (dirs[i] == NULL)
            continue;
          g_autofree gchar *path = g_build_filename (dirs[i], "clusters.json", NULL);
          if (!cluster_from_file (path, cluster, t, &found, error))
            return FALSE;
          if (found)
            return TRUE;
        }
    }
  return set_url (t, STG_CLI_DEFAULT_URL, "the default", error);
}

/* ---- credentials --------------------------------------------------------- */

/* The credentials file must be a regular file of ours that nobody else may
 * read or write. */
static gboolean
check_private (const gchar *path, GError **error)
{
  GStatBuf st;

  if (g_lstat (path, &st) != 0)
    {
      int saved = errno;
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG, "%s: %s", path, g_strerror (saved));
      return FALSE;
    }
  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG, "%s: not a regular file", path);
      return FALSE;
    }
  if (st.st_uid != getuid ())
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG,
                   "%s: belongs to another user; it must be yours alone", path);
      return FALSE;
    }
  if ((st.st_mode & 077) != 0)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG,
                   "%s: others may read or change it (mode %04o); run: chmod 600 %s", path,
                   (unsigned) (st.st_mode & 07777), path);
      return FALSE;
    }
  return TRUE;
}

/* Reads the entry for @cluster (or "*") from the credentials file:
 *   {"local": {"user": "alice", "password": "..."}, "*": {"token": "..."}} */
static gboolean
credentials_from_file (const gchar *path, const gchar *cluster, StgCliTarget *t, GError **error)
{
  JsonNode *n = NULL;

  if (!g_file_test (path, G_FILE_TEST_EXISTS) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
    return TRUE;
  if (!check_private (path, error))
    return FALSE;
  g_autoptr (JsonNode) root = load_json (path, error);
  if (root == NULL)
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG,
                   "%s: expected an object mapping cluster names to credentials", path);
      return FALSE;
    }
  JsonObject *all = json_node_get_object (root);
  const gchar *name = cluster;
  if (cluster != NULL)
    n = json_object_get_member (all, cluster);
  if (n == NULL)
    {
      name = "*";
      n = json_object_get_member (all, "*");
    }
  if (n == NULL)
    return TRUE;
  JsonObject *entry = JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
  const gchar *user = entry ? string_member (entry, "user") : NULL;
  const gchar *password = entry ? string_member (entry, "password") : NULL;
  const gchar *token = entry ? string_member (entry, "token") : NULL;
  if ((user != NULL) == (token != NULL) || (user != NULL && password == NULL))
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG,
                   "%s: the entry '%s' needs either \"user\" and \"password\", or \"token\"",
                   path, name);
      return FALSE;
    }
  t->user = g_strdup (user);
  t->password = g_strdup (password);
  t->token = g_strdup (token);
  t->credentials_from = g_strdup (path);
  return TRUE;
}

static gboolean
resolve_credentials (const StgCliSources *s, const gchar *cluster, StgCliTarget *t, GError **error)
{
  if (s->user_option != NULL)
    {
      const gchar *colon = strchr (s->user_option, ':');
      t->user = colon ? g_strndup (s->user_option, (gsize) (colon - s->user_option))
                      : g_strdup (s->user_option);
      if (t->user[0] == '\0')
        {
          g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
                       "--auth-user needs a user name: --auth-user USER or --auth-user USER:PASSWORD");
          return FALSE;
        }
      if (colon != NULL)
        t->password = g_strdup (colon + 1);
      else
        {
          g_autofree gchar *question = g_strdup_printf ("Password for %s: ", t->user);
          t->password = s->prompt ? s->prompt (question, s->prompt_data) : NULL;
          if (t->password == NULL)
            {
              g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
                           "no password for %s and no terminal to ask on: give --auth-user %s:PASSWORD "
                           "or put it in the credentials file", t->user, t->user);
              return FALSE;
            }
        }
      t->credentials_from = g_strdup ("--auth-user");
      return TRUE;
    }
  if (s->env_token != NULL)
    {
      t->token = g_strdup (s->env_token);
      t->credentials_from = g_strdup ("STAGGER_TOKEN");
      return TRUE;
    }
  if (s->user_config_dir == NULL)
    return TRUE;
  g_autofree gchar *path = g_build_filename (s->user_config_dir, "credentials.json", NULL);
  return credentials_from_file (path, cluster, t, error);
}

/* ---- the wait for a leader ------------------------------------------------ */

static gboolean
resolve_leader_wait (const StgCliSources *s, StgCliTarget *t, GError **error)
{
  gdouble seconds = s->leader_wait_option;
  gchar *end = NULL;

  if (!isnan (seconds) && !(seconds >= 0))
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
                   "--leader-wait %g: expected seconds, 0 or more", seconds);
      return FALSE;
    }
  if (isnan (seconds) && s->env_leader_wait != NULL)
    {
      seconds = g_ascii_strtod (s->env_leader_wait, &end);
      if (end == s->env_leader_wait || *end != '\0' || !(seconds >= 0))
        {
          g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG,
                       "STAGGER_LEADER_WAIT='%s': expected seconds, such as 10 or 0.5",
                       s->env_leader_wait);
          return FALSE;
        }
    }
  if (seconds > 3600)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
                   "a leader wait of %g s is too long: at most 3600", seconds);
      return FALSE;
    }
  t->leader_wait_ms = isnan (seconds) ? STG_CLI_DEFAULT_LEADER_WAIT_MS : (guint) (seconds * 1000);
  return TRUE;
}

StgCliTarget *
stg_cli_target_resolve (const StgCliSources *sources, GError **error)
{
  g_autoptr (StgCliTarget) t = g_new0 (StgCliTarget, 1);
  g_autofree gchar *sole = NULL;

  /* A command that names no cluster, with no URL given, uses the clusters
   * file's only cluster. */
  if (sources->cluster == NULL && (sources->url_options == NULL || !sources->url_options[0]) &&
      sources->env_url == NULL && !sole_cluster (sources, &sole, error))
    return NULL;
  const gchar *cluster = sources->cluster ? sources->cluster : sole;
  /* The wait first: a cluster found in ZooKeeper waits that long for a leader. */
  if (!resolve_leader_wait (sources, t, error) || !resolve_url (sources, cluster, t, error) ||
      !resolve_credentials (sources, cluster, t, error))
    return NULL;
  if (sources->env_ca_file != NULL)
    {
      g_free (t->ca_file);
      t->ca_file = g_strdup (sources->env_ca_file);
    }
  return g_steal_pointer (&t);
}

/* ---- asking for a password -------------------------------------------------- */

/* Asks on /dev/tty with echo off (an StgCliPrompt). */
static gchar *
prompt_tty (const gchar *question, gpointer data)
{
  struct termios old, quiet;
  GString *line = g_string_new (NULL);
  gboolean got = FALSE;
  int fd = open ("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  (void) data;

  if (fd < 0 || tcgetattr (fd, &old) != 0)
    {
      if (fd >= 0)
        close (fd);
      g_string_free (line, TRUE);
      return NULL;
    }
  quiet = old;
  quiet.c_lflag &= ~(tcflag_t) ECHO;
  if (write (fd, question, strlen (question)) < 0 || tcsetattr (fd, TCSAFLUSH, &quiet) != 0)
    {
      close (fd);
      g_string_free (line, TRUE);
      return NULL;
    }
  for (;;)
    {
      char c;
      ssize_t n = read (fd, &c, 1);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got = TRUE;
      if (c == '\n' || c == '\r')
        break;
      if (line->len < 4096)
        g_string_append_c (line, c);
    }
  tcsetattr (fd, TCSAFLUSH, &old);
  if (write (fd, "\n", 1) < 0)
    {
      /* Only the line break after the hidden input is lost. */
    }
  close (fd);
  return got ? g_string_free (line, FALSE) : (g_string_free (line, TRUE), NULL);
}
