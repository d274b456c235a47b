/* serverset.c: StgServerSet, one member of a ZooKeeper ServerSet kept in
 * place, as Aurora's announcer keeps a task's:
 *
 *   wanted and connected, no member --[create member_ (parents first)]--> member
 *   member --[deleted by someone else]----------------------------------> created again
 *   member --[connection lost]--> kept (the session lives on) --[back]--> member
 *   member --[session expired]--> none --[a new session]----------------> created again
 *   any --[no connection for two session timeouts: on_unheard]--> a new session
 *        (a ZooKeeper that lost its data refuses a session that saw newer
 *        transactions, and the client would ask again forever)
 *   member --[leave]--> deleted;  freed --[session closed]--> ZooKeeper deletes it
 *
 * ZooKeeper's client calls back on a thread of its own; each call becomes
 * an Event handled on the main context the set was made on, tagged with the
 * session it came from, so that news of a closed session is dropped.
 * Main-loop thread only, but for post() and the callbacks that call it.
 */
#include "config.h"

#include <string.h>

#include "common/error.h"
#include "zk/zk_private.h"

/* A refused create is tried again after this (Aurora's announcer: 15 s). */
#define RETRY_MS 5000

typedef struct
{
  StgServerSet *set; /* not a reference: sessions are closed before the set goes */
  guint session;
} Tag;

struct _StgServerSet
{
  gint refs; /* the owner's, and one per Event on its way */
  GMainContext *context;
  gchar *ensemble;
  StgZkAuth *auth;
  gint timeout_ms;
  gchar *path;
  gchar *data;
  gboolean exclusive;
  StgServerSetFunc func;
  gpointer func_data;

  zhandle_t *zh;
  Tag *tag;      /* the current session's */
  guint session; /* counts sessions; events of older ones are dropped */
  gboolean connected, wanted, creating, closed;
  gchar *member; /* the node, while it is one */
  gchar *problem;
  gchar *unconnected; /* the problem while never connected */
  guint retry_id;
  guint unheard_id; /* while not connected: a new session after two timeouts */
};

typedef enum
{
  EV_STATE,
  EV_CREATED,
  EV_DELETED,
  EV_CHILDREN,
} Kind;

typedef struct
{
  StgServerSet *set;
  guint session;
  Kind kind;
  gint code; /* a state, or a return code */
  gchar *path;
  gchar **names;
} Event;

static void
set_unref (StgServerSet *set)
{
  if (!g_atomic_int_dec_and_test (&set->refs))
    return;
  g_main_context_unref (set->context);
  g_free (set->ensemble);
  stg_zk_auth_free (set->auth);
  g_free (set->path);
  g_free (set->data);
  g_free (set->member);
  g_free (set->problem);
  g_free (set->unconnected);
  g_free (set);
}

static void
event_free (gpointer data)
{
  Event *ev = data;

  set_unref (ev->set);
  g_free (ev->path);
  g_strfreev (ev->names);
  g_free (ev);
}

static gboolean dispatch (gpointer data);

/* From ZooKeeper's thread: hands the news to the main context. */
static void
post (const Tag *tag, Kind kind, gint code, const gchar *path, gchar **names)
{
  Event *ev = g_new0 (Event, 1);

  g_atomic_int_inc (&tag->set->refs);
  ev->set = tag->set;
  ev->session = tag->session;
  ev->kind = kind;
  ev->code = code;
  ev->path = g_strdup (path);
  ev->names = names;
  g_main_context_invoke_full (tag->set->context, G_PRIORITY_DEFAULT, dispatch, ev, event_free);
}

static void
watcher (zhandle_t *zh, int type, int state, const char *path, void *context)
{
  (void) zh;
  if (type == ZOO_SESSION_EVENT)
    post (context, EV_STATE, state, NULL, NULL);
  else if (type == ZOO_DELETED_EVENT)
    post (context, EV_DELETED, 0, path, NULL);
}

static void
created_done (int rc, const char *value, const void *data)
{
  post (data, EV_CREATED, rc, value, NULL);
}

static void
children_done (int rc, const struct String_vector *strings, const void *data)
{
  GPtrArray *names = g_ptr_array_new ();

  for (gint32 i = 0; rc == ZOK && strings != NULL && i < strings->count; i++)
    g_ptr_array_add (names, g_strdup (strings->data[i]));
  g_ptr_array_add (names, NULL);
  post (data, EV_CHILDREN, rc, NULL, (gchar **) g_ptr_array_free (names, FALSE));
}

static void
ignore_string (int rc, const char *value, const void *data)
{
  (void) rc, (void) value, (void) data;
}

static void
ignore_void (int rc, const void *data)
{
  (void) rc, (void) data;
}

static void
ignore_stat (int rc, const struct Stat *stat, const void *data)
{
  (void) rc, (void) stat, (void) data;
}

static void
set_problem (StgServerSet *set, gchar *problem)
{
  g_free (set->problem);
  set->problem = problem;
  if (problem != NULL)
    g_message ("zookeeper: %s: %s", set->path, problem);
}

static void maybe_create (StgServerSet *set);
static void reopen (StgServerSet *set);

static gboolean
on_retry (gpointer data)
{
  StgServerSet *set = data;

  set->retry_id = 0;
  if (set->zh == NULL)
    reopen (set);
  else
    maybe_create (set);
  return G_SOURCE_REMOVE;
}

static void
retry_later (StgServerSet *set)
{
  if (set->retry_id == 0)
    set->retry_id = g_timeout_add (RETRY_MS, on_retry, set);
}

static gboolean
on_unheard (gpointer data)
{
  StgServerSet *set = data;

  set->unheard_id = 0;
  set_problem (set, g_strdup_printf ("no answer from ZooKeeper %s for %d ms: a new session",
                                     set->ensemble, 2 * set->timeout_ms));
  reopen (set);
  return G_SOURCE_REMOVE;
}

/* Armed whenever the set is not connected, cancelled once it is. */
static void
watch_unheard (StgServerSet *set)
{
  if (set->unheard_id == 0)
    set->unheard_id = g_timeout_add ((guint) (2 * set->timeout_ms), on_unheard, set);
}

/* A new session (the last one expired, or was never made). */
static void
reopen (StgServerSet *set)
{
  g_autoptr (GError) error = NULL;

  set->session++;
  set->connected = FALSE;
  set->creating = FALSE;
  g_clear_pointer (&set->member, g_free);
  if (set->zh != NULL)
    zookeeper_close (set->zh);
  set->zh = NULL;
  g_clear_pointer (&set->tag, g_free);
  set->tag = g_new0 (Tag, 1);
  set->tag->set = set;
  set->tag->session = set->session;
  set->zh = stg_zk_open (set->ensemble, set->auth, set->timeout_ms, watcher, set->tag, &error);
  if (set->zh == NULL)
    {
      set_problem (set, g_strdup (error->message));
      retry_later (set);
      return;
    }
  g_clear_handle_id (&set->unheard_id, g_source_remove);
  watch_unheard (set);
}

/* Each folder above the member, then the member, in one pipeline:
 * ZooKeeper answers a session's requests in order, so the parents exist
 * (or their failure is the member's) by the time the member is made. */
static void
maybe_create (StgServerSet *set)
{
  struct ACL_vector *acl = stg_zk_auth_acl (set->auth);

  if (!set->wanted || !set->connected || set->creating || set->member != NULL || set->zh == NULL)
    return;
  for (const gchar *slash = strchr (set->path + 1, '/');; slash = strchr (slash + 1, '/'))
    {
      g_autofree gchar *parent = slash ? g_strndup (set->path, (gsize) (slash - set->path))
                                       : g_strdup (set->path);
      zoo_acreate (set->zh, parent, NULL, -1, acl, 0, ignore_string, NULL);
      if (slash == NULL)
        break;
    }
  g_autofree gchar *member = g_strconcat (set->path, "/member_", NULL);
  int rc = zoo_acreate (set->zh, member, set->data, (int) strlen (set->data), acl,
                        ZOO_EPHEMERAL_SEQUENTIAL, created_done, set->tag);
  if (rc != ZOK)
    {
      set_problem (set, g_strdup_printf ("joining: %s", zerror (rc)));
      retry_later (set);
      return;
    }
  set->creating = TRUE;
}

static void
on_state (StgServerSet *set, gint state)
{
  if (state == ZOO_CONNECTED_STATE)
    {
      set->connected = TRUE;
      g_clear_handle_id (&set->unheard_id, g_source_remove);
      if (set->member != NULL || !set->wanted)
        set_problem (set, NULL);
      maybe_create (set);
    }
  else if (state == ZOO_EXPIRED_SESSION_STATE)
    {
      set_problem (set, g_strdup ("the ZooKeeper session expired: a new one is opened and the "
                                  "member made again"));
      reopen (set);
    }
  else if (state == ZOO_AUTH_FAILED_STATE)
    {
      set->connected = FALSE;
      set_problem (set, g_strdup_printf ("ZooKeeper %s refused the credentials of the auth file",
                                         set->ensemble));
      zookeeper_close (set->zh);
      set->zh = NULL;
      set->session++;
      retry_later (set);
    }
  else if (set->connected)
    {
      set->connected = FALSE;
      watch_unheard (set);
      set_problem (set, g_strdup_printf ("the connection to ZooKeeper %s was lost; the member "
                                         "stays while the session lives",
                                         set->ensemble));
    }
}

static void
on_created (StgServerSet *set, gint rc, const gchar *path)
{
  set->creating = FALSE;
  if (rc == ZOK && path != NULL)
    {
      if (!set->wanted)
        {
          zoo_adelete (set->zh, path, -1, ignore_void, NULL);
          return;
        }
      set->member = g_strdup (path);
      set_problem (set, NULL);
      g_message ("zookeeper: %s: joined as %s", set->path, path);
      zoo_aexists (set->zh, set->member, 1, ignore_stat, NULL);
      if (set->exclusive)
        zoo_aget_children (set->zh, set->path, 0, children_done, set->tag);
      return;
    }
  if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONEXPIRED || rc == ZCLOSING)
    {
      /* The next CONNECTED (or the new session) makes it. */
      if (set->connected)
        retry_later (set);
      return;
    }
  set_problem (set, g_strdup_printf ("joining: %s", zerror (rc)));
  retry_later (set);
}

/* An exclusive member deletes the others: a leader killed without closing
 * its session would stay listed until the session times out. */
static void
on_children (StgServerSet *set, gint rc, gchar **names)
{
  if (rc != ZOK || set->member == NULL)
    return;
  const gchar *mine = strrchr (set->member, '/') + 1;
  for (guint i = 0; names[i] != NULL; i++)
    if (g_str_has_prefix (names[i], "member_") && !g_str_equal (names[i], mine))
      {
        g_autofree gchar *other = g_strconcat (set->path, "/", names[i], NULL);
        g_message ("zookeeper: %s: %s is not this member: deleted", set->path, names[i]);
        zoo_adelete (set->zh, other, -1, ignore_void, NULL);
      }
}

static gboolean
dispatch (gpointer data)
{
  Event *ev = data;
  StgServerSet *set = ev->set;

  if (set->closed || ev->session != set->session)
    return G_SOURCE_REMOVE;
  switch (ev->kind)
    {
    case EV_STATE:
      on_state (set, ev->code);
      break;
    case EV_CREATED:
      on_created (set, ev->code, ev->path);
      break;
    case EV_DELETED:
      if (set->member == NULL || g_strcmp0 (ev->path, set->member) != 0)
        return G_SOURCE_REMOVE;
      g_message ("zookeeper: %s: the member %s was deleted: made again", set->path, set->member);
      g_clear_pointer (&set->member, g_free);
      maybe_create (set);
      break;
    case EV_CHILDREN:
      on_children (set, ev->code, ev->names);
      break;
    }
  if (set->func != NULL)
    set->func (set, set->func_data);
  return G_SOURCE_REMOVE;
}

StgServerSet *
stg_serverset_new (const StgServerSetSpec *spec, StgServerSetFunc func, gpointer data,
                   GError **error)
{
  if (!stg_zk_ensemble_check (spec->ensemble, error) || !stg_zk_path_check (spec->path, error))
    return NULL;
  StgServerSet *set = g_new0 (StgServerSet, 1);
  set->refs = 1;
  set->context = g_main_context_ref_thread_default ();
  set->ensemble = g_strdup (spec->ensemble);
  set->auth = stg_zk_auth_copy (spec->auth);
  set->timeout_ms = spec->session_timeout_ms > 0 ? spec->session_timeout_ms
                                                 : STG_ZK_SESSION_TIMEOUT_MS;
  set->path = g_strdup (spec->path);
  set->data = g_strdup (spec->data);
  set->exclusive = spec->exclusive;
  set->func = func;
  set->func_data = data;
  set->unconnected = g_strdup_printf ("not connected to ZooKeeper %s", spec->ensemble);
  set->tag = g_new0 (Tag, 1);
  set->tag->set = set;
  set->tag->session = set->session;
  set->zh = stg_zk_open (set->ensemble, set->auth, set->timeout_ms, watcher, set->tag, error);
  if (set->zh == NULL)
    {
      g_free (set->tag);
      set_unref (set);
      return NULL;
    }
  watch_unheard (set);
  return set;
}

void
stg_serverset_join (StgServerSet *set)
{
  set->wanted = TRUE;
  maybe_create (set);
}

void
stg_serverset_leave (StgServerSet *set)
{
  set->wanted = FALSE;
  if (set->member == NULL)
    return;
  g_message ("zookeeper: %s: leaving (%s deleted)", set->path, set->member);
  zoo_adelete (set->zh, set->member, -1, ignore_void, NULL);
  g_clear_pointer (&set->member, g_free);
}

const gchar *
stg_serverset_path (StgServerSet *set)
{
  return set->path;
}

const gchar *
stg_serverset_data (StgServerSet *set)
{
  return set->data;
}

const gchar *
stg_serverset_member (StgServerSet *set)
{
  return set->member;
}

gboolean
stg_serverset_connected (StgServerSet *set)
{
  return set->connected;
}

gboolean
stg_serverset_wanted (StgServerSet *set)
{
  return set->wanted;
}

const gchar *
stg_serverset_problem (StgServerSet *set)
{
  if (set->problem == NULL && !set->connected)
    return set->unconnected;
  return set->problem;
}

void
stg_serverset_free (StgServerSet *set)
{
  if (set == NULL)
    return;
  set->closed = TRUE;
  g_clear_handle_id (&set->retry_id, g_source_remove);
  g_clear_handle_id (&set->unheard_id, g_source_remove);
  if (set->zh != NULL)
    zookeeper_close (set->zh);
  set->zh = NULL;
  g_clear_pointer (&set->tag, g_free);
  set_unref (set);
}
