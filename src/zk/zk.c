/* zk.c: ZooKeeper's settings and reads: the ensemble string, Aurora's
 * ZooKeeper auth file, a ServerSet member's JSON written and read, and a
 * ServerSet's members read with a short-lived session (clients block on it;
 * staggerd never calls stg_zk_members_read). Any thread.
 */
#include "config.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "common/error.h"
#include "common/json_check.h"
#include "common/json_write.h"
#include "zk/zk_private.h"

/* The largest member JSON read back; Aurora's are a few hundred bytes. */
#define MAX_MEMBER_BYTES (1024 * 1024)

G_DEFINE_QUARK (stg-zk-error-quark, stg_zk_error)

#define bad(error, ...) stg_fail (error, STG_ZK_ERROR, STG_ZK_ERROR_INVALID, __VA_ARGS__)

struct _StgZkAuth
{
  GPtrArray *schemes;    /* auth: scheme and credential, in turn */
  struct ACL_vector acl; /* count 0: the open ACL */
};

static void
acl_clear (struct ACL_vector *acl)
{
  for (gint32 i = 0; i < acl->count; i++)
    {
      g_free (acl->data[i].id.scheme);
      g_free (acl->data[i].id.id);
    }
  g_free (acl->data);
  acl->data = NULL;
  acl->count = 0;
}

void
stg_zk_auth_free (StgZkAuth *auth)
{
  if (auth == NULL)
    return;
  g_ptr_array_unref (auth->schemes);
  acl_clear (&auth->acl);
  g_free (auth);
}

static StgZkAuth *
auth_new (void)
{
  StgZkAuth *auth = g_new0 (StgZkAuth, 1);

  auth->schemes = g_ptr_array_new_with_free_func (g_free);
  return auth;
}

StgZkAuth *
stg_zk_auth_copy (const StgZkAuth *auth)
{
  if (auth == NULL)
    return NULL;
  StgZkAuth *copy = auth_new ();
  for (guint i = 0; i < auth->schemes->len; i++)
    g_ptr_array_add (copy->schemes, g_strdup (auth->schemes->pdata[i]));
  copy->acl.count = auth->acl.count;
  copy->acl.data = g_new0 (struct ACL, MAX (auth->acl.count, 1));
  for (gint32 i = 0; i < auth->acl.count; i++)
    {
      copy->acl.data[i].perms = auth->acl.data[i].perms;
      copy->acl.data[i].id.scheme = g_strdup (auth->acl.data[i].id.scheme);
      copy->acl.data[i].id.id = g_strdup (auth->acl.data[i].id.id);
    }
  return copy;
}

struct ACL_vector *
stg_zk_auth_acl (const StgZkAuth *auth)
{
  if (auth == NULL || auth->acl.count == 0)
    return &ZOO_OPEN_ACL_UNSAFE;
  return (struct ACL_vector *) &auth->acl;
}

/* The member @key of @o as a string; FALSE (and @error) when missing or
 * not a string. */
static const gchar *
string_member (JsonObject *o, const gchar *key, const gchar *where, GError **error)
{
  JsonNode *n = json_object_get_member (o, key);

  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
    {
      bad (error, "%s.%s: a string is required", where, key);
      return NULL;
    }
  return json_node_get_string (n);
}

/* Every member of @o is one of @keys (NULL-terminated). */
static gboolean
only_keys (JsonObject *o, const gchar *const *keys, const gchar *where, GError **error)
{
  g_autoptr (GList) names = json_object_get_members (o);

  for (GList *l = names; l != NULL; l = l->next)
    if (!g_strv_contains (keys, l->data))
      return bad (error, "%s.%s: no such key", where, (const gchar *) l->data);
  return TRUE;
}

/* ZooKeeper's digest id of "user:password": user:base64(sha1(user:password)). */
static gchar *
digest_id (const gchar *credential, const gchar *where, GError **error)
{
  const gchar *colon = strchr (credential, ':');
  guint8 sum[20];
  gsize len = sizeof sum;

  if (colon == NULL || colon == credential || strchr (colon + 1, ':') != NULL)
    {
      bad (error, "%s: a digest credential is user:password", where);
      return NULL;
    }
  g_autoptr (GChecksum) sha1 = g_checksum_new (G_CHECKSUM_SHA1);
  g_checksum_update (sha1, (const guchar *) credential, (gssize) strlen (credential));
  g_checksum_get_digest (sha1, sum, &len);
  g_autofree gchar *b64 = g_base64_encode (sum, len);
  return g_strdup_printf ("%.*s:%s", (int) (colon - credential), credential, b64);
}

static gboolean
read_permissions (JsonObject *o, const gchar *where, gint32 *perms, GError **error)
{
  static const gchar *const keys[] = { "read", "write", "create", "delete", "admin", NULL };
  const gint bits[] = { ZOO_PERM_READ, ZOO_PERM_WRITE, ZOO_PERM_CREATE, ZOO_PERM_DELETE,
                        ZOO_PERM_ADMIN };

  if (!only_keys (o, keys, where, error))
    return FALSE;
  *perms = 0;
  for (guint i = 0; keys[i] != NULL; i++)
    {
      JsonNode *n = json_object_get_member (o, keys[i]);
      if (n == NULL)
        continue;
      if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_BOOLEAN)
        return bad (error, "%s.%s: true or false", where, keys[i]);
      if (json_node_get_boolean (n))
        *perms |= bits[i];
    }
  return TRUE;
}

static gboolean
read_access (StgZkAuth *auth, JsonNode *node, const gchar *where, gboolean acl, GError **error)
{
  static const gchar *const auth_keys[] = { "scheme", "credential", NULL };
  static const gchar *const acl_keys[] = { "scheme", "credential", "permissions", NULL };

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return bad (error, "%s: an object is required", where);
  JsonObject *o = json_node_get_object (node);
  if (!only_keys (o, acl ? acl_keys : auth_keys, where, error))
    return FALSE;
  const gchar *scheme = string_member (o, "scheme", where, error);
  const gchar *credential = scheme ? string_member (o, "credential", where, error) : NULL;
  if (credential == NULL)
    return FALSE;
  if (!acl)
    {
      g_ptr_array_add (auth->schemes, g_strdup (scheme));
      g_ptr_array_add (auth->schemes, g_strdup (credential));
      return TRUE;
    }
  JsonNode *p = json_object_get_member (o, "permissions");
  g_autofree gchar *pwhere = g_strconcat (where, ".permissions", NULL);
  struct ACL entry = { 0 };
  if (p == NULL || !JSON_NODE_HOLDS_OBJECT (p))
    return bad (error, "%s: an object is required", pwhere);
  if (!read_permissions (json_node_get_object (p), pwhere, &entry.perms, error))
    return FALSE;
  g_autofree gchar *id = g_str_equal (scheme, "digest") ? digest_id (credential, where, error)
                                                        : g_strdup (credential);
  if (id == NULL)
    return FALSE;
  auth->acl.data = g_renew (struct ACL, auth->acl.data, auth->acl.count + 1);
  entry.id.scheme = g_strdup (scheme);
  entry.id.id = g_steal_pointer (&id);
  auth->acl.data[auth->acl.count++] = entry;
  return TRUE;
}

StgZkAuth *
stg_zk_auth_parse (const gchar *text, const gchar *where, GError **error)
{
  static const gchar *const keys[] = { "auth", "acl", NULL };
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (StgZkAuth) auth = auth_new ();
  g_autoptr (GError) local = NULL;

  if (!stg_json_load (parser, text, -1, &local))
    {
      bad (error, "%s: %s", where, local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      bad (error, "%s: a JSON object with \"auth\" and \"acl\" lists is required", where);
      return NULL;
    }
  JsonObject *o = json_node_get_object (root);
  if (!only_keys (o, keys, where, error))
    return NULL;
  for (guint k = 0; k < 2; k++)
    {
      JsonNode *list = json_object_get_member (o, keys[k]);
      if (list == NULL)
        continue;
      if (!JSON_NODE_HOLDS_ARRAY (list))
        {
          bad (error, "%s.%s: a list is required", where, keys[k]);
          return NULL;
        }
      JsonArray *a = json_node_get_array (list);
      for (guint i = 0; i < json_array_get_length (a); i++)
        {
          g_autofree gchar *at = g_strdup_printf ("%s.%s[%u]", where, keys[k], i);
          if (!read_access (auth, json_array_get_element (a, i), at, k == 1, error))
            return NULL;
        }
    }
  return g_steal_pointer (&auth);
}

StgZkAuth *
stg_zk_auth_load (const gchar *path, GError **error)
{
  g_autofree gchar *text = NULL;
  g_autoptr (GError) local = NULL;

  if (!g_file_get_contents (path, &text, NULL, &local))
    {
      bad (error, "the ZooKeeper auth file: %s", local->message);
      return NULL;
    }
  return stg_zk_auth_parse (text, path, error);
}

gboolean
stg_zk_path_check (const gchar *path, GError **error)
{
  if (path == NULL || path[0] != '/' || (path[1] != '\0' && g_str_has_suffix (path, "/")))
    return bad (error, "'%s' is not a ZooKeeper path (absolute, like /aurora/scheduler)",
                path ? path : "");
  g_auto (GStrv) parts = g_strsplit (path + 1, "/", -1);
  for (guint i = 0; parts[i] != NULL && path[1] != '\0'; i++)
    if (parts[i][0] == '\0' || g_str_equal (parts[i], ".") || g_str_equal (parts[i], ".."))
      return bad (error, "'%s' is not a ZooKeeper path: no part may be empty, '.' or '..'", path);
  return TRUE;
}

gboolean
stg_zk_ensemble_check (const gchar *ensemble, GError **error)
{
  if (ensemble == NULL || ensemble[0] == '\0')
    return bad (error, "the ZooKeeper ensemble is empty (give host:port[,host:port...])");
  const gchar *chroot = strchr (ensemble, '/');
  g_autofree gchar *hosts = g_strndup (ensemble,
                                       chroot ? (gsize) (chroot - ensemble) : strlen (ensemble));
  g_auto (GStrv) each = g_strsplit (hosts, ",", -1);
  for (guint i = 0; each[i] != NULL; i++)
    {
      const gchar *colon = strrchr (each[i], ':');
      guint64 port = 0;
      if (colon == NULL || colon == each[i] ||
          !g_ascii_string_to_unsigned (colon + 1, 10, 1, 65535, &port, NULL))
        return bad (error, "ZooKeeper ensemble '%s': '%s' is not host:port (port 1 to 65535)",
                    ensemble, each[i]);
    }
  if (chroot != NULL && !stg_zk_path_check (chroot, error))
    return FALSE;
  return TRUE;
}

static JsonNode *
endpoint_node (const gchar *host, gint port)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "host");
  json_builder_add_string_value (b, host);
  json_builder_set_member_name (b, "port");
  json_builder_add_int_value (b, port);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

gchar *
stg_zk_member_json (const gchar *host, gint port, GHashTable *additional, gint shard)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "serviceEndpoint");
  json_builder_add_value (b, endpoint_node (host, port));
  json_builder_set_member_name (b, "additionalEndpoints");
  json_builder_begin_object (b);
  if (additional != NULL)
    {
      g_autoptr (GList) names = g_hash_table_get_keys (additional);
      names = g_list_sort (names, (GCompareFunc) g_strcmp0);
      for (GList *l = names; l != NULL; l = l->next)
        {
          json_builder_set_member_name (b, l->data);
          json_builder_add_value (b, endpoint_node (host, GPOINTER_TO_INT (
                                                              g_hash_table_lookup (additional,
                                                                                   l->data))));
        }
    }
  json_builder_end_object (b);
  json_builder_set_member_name (b, "status");
  json_builder_add_string_value (b, "ALIVE");
  if (shard >= 0)
    {
      json_builder_set_member_name (b, "shard");
      json_builder_add_int_value (b, shard);
    }
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  return stg_json_write (root, FALSE, NULL);
}

gboolean
stg_zk_member_endpoint (const gchar *data, const gchar *name, gchar **host, gint *port)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o;
  JsonNode *n;

  if (data == NULL || !stg_json_load (parser, data, -1, NULL))
    return FALSE;
  n = json_parser_get_root (parser);
  if (n == NULL || !JSON_NODE_HOLDS_OBJECT (n))
    return FALSE;
  o = json_node_get_object (n);
  if (name != NULL)
    {
      n = json_object_get_member (o, "additionalEndpoints");
      if (n == NULL || !JSON_NODE_HOLDS_OBJECT (n))
        return FALSE;
      o = json_node_get_object (n);
    }
  n = json_object_get_member (o, name != NULL ? name : "serviceEndpoint");
  if (n == NULL || !JSON_NODE_HOLDS_OBJECT (n))
    return FALSE;
  o = json_node_get_object (n);
  JsonNode *h = json_object_get_member (o, "host"), *p = json_object_get_member (o, "port");
  if (h == NULL || p == NULL || !JSON_NODE_HOLDS_VALUE (h) || !JSON_NODE_HOLDS_VALUE (p) ||
      json_node_get_value_type (h) != G_TYPE_STRING || json_node_get_value_type (p) != G_TYPE_INT64)
    return FALSE;
  gint64 number = json_node_get_int (p);
  if (number < 0 || number > 65535)
    return FALSE;
  *host = g_strdup (json_node_get_string (h));
  *port = (gint) number;
  return TRUE;
}

/* ---- a session ------------------------------------------------------------------------- */

static gpointer
quiet_once (gpointer data)
{
  (void) data;
  /* 0 turns the client's own logging off: connection attempts to a
   * stopped server would fill stderr every second. */
  zoo_set_debug_level ((ZooLogLevel) 0);
  return NULL;
}

zhandle_t *
stg_zk_open (const gchar *ensemble, const StgZkAuth *auth, gint timeout_ms, watcher_fn watcher,
             gpointer context, GError **error)
{
  static GOnce once = G_ONCE_INIT;

  g_once (&once, quiet_once, NULL);
  if (!stg_zk_ensemble_check (ensemble, error))
    return NULL;
  zhandle_t *zh = zookeeper_init (ensemble, watcher, timeout_ms, NULL, context, 0);
  if (zh == NULL)
    {
      stg_fail (error, STG_ZK_ERROR, STG_ZK_ERROR_INVALID, "ZooKeeper ensemble '%s': %s", ensemble,
                errno == EINVAL ? "a host does not resolve" : g_strerror (errno));
      return NULL;
    }
  for (guint i = 0; auth != NULL && i + 1 < auth->schemes->len; i += 2)
    {
      const gchar *cred = auth->schemes->pdata[i + 1];
      zoo_add_auth (zh, auth->schemes->pdata[i], cred, (int) strlen (cred), NULL, NULL);
    }
  return zh;
}

/* ---- reading a ServerSet (blocking) ---------------------------------------------------- */

typedef struct
{
  GMutex lock;
  GCond cond;
  gint state;
} Waiter;

static void
wait_watcher (zhandle_t *zh, int type, int state, const char *path, void *context)
{
  Waiter *w = context;

  (void) zh, (void) path;
  if (type != ZOO_SESSION_EVENT)
    return;
  g_mutex_lock (&w->lock);
  w->state = state;
  g_cond_broadcast (&w->cond);
  g_mutex_unlock (&w->lock);
}

static void
member_free (gpointer data)
{
  StgZkMember *m = data;

  g_free (m->name);
  g_free (m->data);
  g_free (m);
}

static gint
compare_members (gconstpointer a, gconstpointer b)
{
  const StgZkMember *x = *(StgZkMember *const *) a, *y = *(StgZkMember *const *) b;

  return strcmp (x->name, y->name);
}

static GPtrArray *
read_members (zhandle_t *zh, const gchar *path, GError **error)
{
  struct String_vector children = { 0 };
  g_autoptr (GPtrArray) members = g_ptr_array_new_with_free_func (member_free);
  g_autofree gchar *buf = g_malloc (MAX_MEMBER_BYTES);

  int rc = zoo_get_children (zh, path, 0, &children);
  if (rc == ZNONODE)
    return g_steal_pointer (&members);
  if (rc != ZOK)
    {
      stg_fail (error, STG_ZK_ERROR, STG_ZK_ERROR_FAILED, "reading %s: %s", path, zerror (rc));
      return NULL;
    }
  for (gint32 i = 0; i < children.count; i++)
    {
      if (!g_str_has_prefix (children.data[i], "member_"))
        continue;
      g_autofree gchar *child = g_strconcat (path, "/", children.data[i], NULL);
      int len = MAX_MEMBER_BYTES - 1;
      struct Stat stat;
      rc = zoo_get (zh, child, 0, buf, &len, &stat);
      if (rc == ZNONODE) /* gone since the list was read */
        continue;
      if (rc != ZOK)
        {
          stg_fail (error, STG_ZK_ERROR, STG_ZK_ERROR_FAILED, "reading %s: %s", child, zerror (rc));
          deallocate_String_vector (&children);
          return NULL;
        }
      StgZkMember *m = g_new0 (StgZkMember, 1);
      m->name = g_strdup (children.data[i]);
      m->data = g_strndup (buf, len > 0 ? (gsize) len : 0);
      g_ptr_array_add (members, m);
    }
  deallocate_String_vector (&children);
  g_ptr_array_sort (members, compare_members);
  return g_steal_pointer (&members);
}

GPtrArray *
stg_zk_members_read (const gchar *ensemble, const StgZkAuth *auth, const gchar *path,
                     gint timeout_ms, GError **error)
{
  Waiter w = { .state = 0 };
  GPtrArray *members = NULL;

  if (!stg_zk_path_check (path, error))
    return NULL;
  g_mutex_init (&w.lock);
  g_cond_init (&w.cond);
  zhandle_t *zh = stg_zk_open (ensemble, auth, timeout_ms, wait_watcher, &w, error);
  if (zh != NULL)
    {
      gint64 end = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
      g_mutex_lock (&w.lock);
      while (w.state != ZOO_CONNECTED_STATE && w.state != ZOO_AUTH_FAILED_STATE &&
             g_cond_wait_until (&w.cond, &w.lock, end))
        ;
      gint state = w.state;
      g_mutex_unlock (&w.lock);
      if (state == ZOO_CONNECTED_STATE)
        members = read_members (zh, path, error);
      else if (state == ZOO_AUTH_FAILED_STATE)
        stg_fail (error, STG_ZK_ERROR, STG_ZK_ERROR_FAILED,
                  "ZooKeeper %s refused the credentials of the auth file", ensemble);
      else
        stg_fail (error, STG_ZK_ERROR, STG_ZK_ERROR_UNAVAILABLE,
                  "ZooKeeper %s did not answer within %d ms", ensemble, timeout_ms);
      zookeeper_close (zh);
    }
  g_cond_clear (&w.cond);
  g_mutex_clear (&w.lock);
  return members;
}
