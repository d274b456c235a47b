/* updates.c: the store's job updates: queries over the updates table.
 *
 * Query statements are built from the filter terms that are set, so each
 * shape can use its index (updates_by_job, _by_role, _by_user, _by_status,
 * _by_created); each shape is prepared once and cached. Main-loop thread
 * only.
 */
#include "config.h"

#include "store/store_private.h"

#define SUMMARY_COLUMNS \
  "uid, role, environment, name, user, status, created_ms, modified_ms, metadata"

/* Builds a summary from a row of SUMMARY_COLUMNS starting at column @c. */
static ApiJobUpdateSummary *
read_summary (StgStmt *st, int c)
{
  g_autoptr (ApiJobKey) job = g_object_new (API_TYPE_JOB_KEY,
      "role", (const gchar *) sqlite3_column_text (st, c + 1),
      "environment", (const gchar *) sqlite3_column_text (st, c + 2),
      "name", (const gchar *) sqlite3_column_text (st, c + 3), NULL);
  g_autoptr (ApiJobUpdateKey) key = g_object_new (API_TYPE_JOB_UPDATE_KEY,
      "job", job, "id", (const gchar *) sqlite3_column_text (st, c), NULL);
  g_autoptr (ApiJobUpdateState) state = g_object_new (API_TYPE_JOB_UPDATE_STATE,
      "status", sqlite3_column_int (st, c + 5),
      "createdTimestampMs", (gint64) sqlite3_column_int64 (st, c + 6),
      "lastModifiedTimestampMs", (gint64) sqlite3_column_int64 (st, c + 7), NULL);
  ApiJobUpdateSummary *summary = NULL;

  if (sqlite3_column_type (st, c + 8) == SQLITE_BLOB)
    {
      g_autoptr (GBytes) blob = stg_column_bytes (st, c + 8);
      summary = stg_thrift_new_from_bytes (API_TYPE_JOB_UPDATE_SUMMARY, blob, NULL);
    }
  if (summary == NULL)
    summary = g_object_new (API_TYPE_JOB_UPDATE_SUMMARY, NULL);
  g_object_set (summary, "key", key, "user", (const gchar *) sqlite3_column_text (st, c + 4),
                "state", state, NULL);
  return summary;
}

GPtrArray *
stg_store_query_update_summaries (StgStore *store, const ApiJobUpdateQuery *query,
                                  GError **error)
{
  g_autoptr (GString) sql = g_string_new ("SELECT " SUMMARY_COLUMNS " FROM updates WHERE 1");
  g_autoptr (GPtrArray) binds = g_ptr_array_new ();   /* const gchar*, in order */
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_object_unref);
  const ApiJobKey *job = NULL;
  gint32 limit = -1, offset = 0;

  if (query != NULL)
    {
      if (query->__isset_key && query->key != NULL)
        {
          g_string_append (sql, " AND uid = ?");
          g_ptr_array_add (binds, query->key->id ? query->key->id : (gchar *) "");
          if (query->key->job != NULL && query->key->job->__isset_role)
            job = query->key->job;
        }
      if (query->__isset_jobKey && query->jobKey != NULL)
        job = query->jobKey;
      if (job != NULL)
        {
          g_string_append (sql, " AND role = ? AND environment = ? AND name = ?");
          g_ptr_array_add (binds, job->role ? job->role : (gchar *) "");
          g_ptr_array_add (binds, job->environment ? job->environment : (gchar *) "");
          g_ptr_array_add (binds, job->name ? job->name : (gchar *) "");
        }
      else if (query->__isset_role && query->role != NULL)
        {
          g_string_append (sql, " AND role = ?");
          g_ptr_array_add (binds, query->role);
        }
      if (query->__isset_user && query->user != NULL)
        {
          g_string_append (sql, " AND user = ?");
          g_ptr_array_add (binds, query->user);
        }
      if (query->__isset_updateStatuses && query->updateStatuses != NULL &&
          g_hash_table_size (query->updateStatuses) > 0)
        {
          /* Status values are small integers: inline them (no injection
           * possible) so the statement shape depends only on the count. */
          g_autoptr (GList) keys = g_hash_table_get_keys (query->updateStatuses);
          g_string_append (sql, " AND status IN (");
          guint bits = 0;
          /* Elements of a set of enums are the values themselves. */
          for (GList *l = keys; l != NULL; l = l->next)
            {
              gint v = GPOINTER_TO_INT (l->data);
              if (v >= 0 && v < 31)
                bits |= 1u << v;
            }
          gboolean first = TRUE;
          for (gint v = 0; v < 31; v++)
            if (bits & (1u << v))
              {
                g_string_append_printf (sql, first ? "%d" : ", %d", v);
                first = FALSE;
              }
          if (first)
            g_string_append (sql, "-1");
          g_string_append (sql, ")");
        }
      if (query->__isset_limit && query->limit > 0)
        limit = query->limit;
      if (query->__isset_offset && query->offset > 0)
        offset = query->offset;
    }
  g_string_append (sql, " ORDER BY created_ms DESC, id DESC LIMIT ? OFFSET ?");

  g_autoptr (StgStmt) st = stg_store_stmt (store, g_intern_string (sql->str), error);
  if (st == NULL)
    return NULL;
  guint i;
  for (i = 0; i < binds->len; i++)
    stg_bind_text (st, (int) i + 1, binds->pdata[i]);
  sqlite3_bind_int64 (st, (int) i + 1, limit);
  sqlite3_bind_int64 (st, (int) i + 2, offset);

  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    g_ptr_array_add (out, read_summary (st, 0));
  if (rc != SQLITE_DONE)
    {
      stg_store_fail (store, error, "querying updates");
      return NULL;
    }
  return g_steal_pointer (&out);
}
