/* run_state.c: what an AuroraExecutor task's runner (stagger-thermos)
 * says of its task in the state file it keeps in the run's sandbox
 * (.thermos_state.json; stagger-thermos(8)): how the task ended, which
 * tells an adopted run's end, and where the task is announced, which
 * job status and the job's page show. The file is the runner's, in a
 * sandbox its instance may write: it is opened without following links
 * and read as untrusted JSON. Main-loop thread only.
 */
#include "config.h"

#include <unistd.h>

#include <json-glib/json-glib.h>

#include "common/json_check.h"
#include "runtime/local/local_private.h"

#define STATE_MAX 65536

/* The state file's object, or NULL (none yet, unreadable, not JSON). */
static JsonObject *
read_state (const Run *run)
{
  const gchar *parts[] = { ".thermos_state.json", NULL };
  gint fd = stg_local_open_run_file (run->sandbox, parts, NULL);
  g_autofree gchar *buf = fd >= 0 ? g_malloc (STATE_MAX) : NULL;
  ssize_t got = fd >= 0 ? read (fd, buf, STATE_MAX - 1) : -1;

  if (fd >= 0)
    close (fd);
  if (got <= 0)
    return NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!stg_json_check_depth (buf, got, STG_JSON_NESTING_MAX, NULL) ||
      !json_parser_load_from_data (parser, buf, got, NULL))
    return NULL;
  JsonNode *root = json_parser_get_root (parser);
  return JSON_NODE_HOLDS_OBJECT (root) ? json_object_ref (json_node_get_object (root)) : NULL;
}

/* Member @name of @o when it is a string, else NULL. */
static const gchar *
string_member (JsonObject *o, const gchar *name)
{
  JsonNode *n = o != NULL ? json_object_get_member (o, name) : NULL;

  return n != NULL && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
             ? json_node_get_string (n)
             : NULL;
}

/* Member @name of @o when it is an object, else NULL. */
static JsonObject *
object_member (JsonObject *o, const gchar *name)
{
  JsonNode *n = o != NULL ? json_object_get_member (o, name) : NULL;

  return n != NULL && JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
}

gchar *
stg_local_runner_state (const Run *run)
{
  g_autoptr (JsonObject) o = run->task->thermos != NULL ? read_state (run) : NULL;

  return g_strdup (string_member (o, "state"));
}

gboolean
stg_local_runner_announcement (const Run *run, StgAnnouncement *out)
{
  g_autoptr (JsonObject) o = run->announcer ? read_state (run) : NULL;
  JsonObject *a = object_member (o, "announce");

  if (string_member (a, "path") == NULL)
    return FALSE;
  out->path = g_strdup (string_member (a, "path"));
  out->member = g_strdup (string_member (a, "member"));
  out->problem = g_strdup (string_member (a, "problem"));
  JsonObject *service = object_member (object_member (a, "data"), "serviceEndpoint");
  JsonNode *port = service != NULL ? json_object_get_member (service, "port") : NULL;
  if (string_member (service, "host") != NULL && port != NULL && JSON_NODE_HOLDS_VALUE (port) &&
      json_node_get_value_type (port) == G_TYPE_INT64)
    out->endpoint = g_strdup_printf ("%s:%" G_GINT64_FORMAT, string_member (service, "host"),
                                     json_node_get_int (port));
  return TRUE;
}
