/* ports.c: the named ports of AuroraExecutor data, as Aurora's client and
 * executor reckon them. The processes' {{thermos.ports[NAME]}} templates
 * and the announcer's portmap ask for ports; a portmap entry makes a name
 * an alias of another name ({'aurora': 'http'}) or a static number
 * ({'http': '80'}). The ports to assign are the names that end no alias
 * chain in a number. Calls common/ and GLib; any thread.
 */
#include "config.h"

#include "thermos/task_private.h"
#include "common/strings.h"

gboolean
stg_thermos_note_port (StgThermosRefKind kind, const gchar *port, gpointer data, GError **error)
{
  StgThermosPortNote *note = data;

  (void) error;
  if (kind == STG_THERMOS_REF_PORT && !g_hash_table_contains (note->refs, port))
    g_hash_table_insert (note->refs, g_strdup (port), g_strdup (note->where));
  return TRUE;
}

/* A static port: digits only, 1 to 65535. */
static gint
static_port (const gchar *text)
{
  gint64 n = 0;

  for (const gchar *c = text; *c != '\0'; c++)
    {
      if (!g_ascii_isdigit (*c) || n > 65535)
        return 0;
      n = n * 10 + (*c - '0');
    }
  return n >= 1 && n <= 65535 ? (gint) n : 0;
}

static gboolean
good_name (const gchar *name)
{
  if (name[0] == '\0')
    return FALSE;
  for (const gchar *c = name; *c != '\0'; c++)
    if (!g_ascii_isalnum (*c) && *c != '_' && *c != '-' && *c != '.' && *c != '/')
      return FALSE;
  return TRUE;
}

/* Where @name's alias chain ends: a name to assign, or a static number
 * (as text). NULL with @error set on a cycle. */
static const gchar *
chain_end (GHashTable *portmap, const gchar *name, GError **error)
{
  const gchar *at = name;

  for (guint steps = 0; g_hash_table_contains (portmap, at); steps++)
    {
      if (steps > g_hash_table_size (portmap))
        {
          stg_thermos_bad (error, "announce.portmap.%s: the aliases form a cycle", name);
          return NULL;
        }
      at = g_hash_table_lookup (portmap, at);
    }
  return at;
}

/* The keys of @table, sorted (the strings are @table's). */
static GPtrArray *
sorted_keys (GHashTable *table)
{
  GPtrArray *keys = g_ptr_array_new ();
  GHashTableIter it;
  gpointer key;

  g_hash_table_iter_init (&it, table);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (keys, key);

  g_ptr_array_sort (keys, stg_compare_string_ptrs);
  return keys;
}

gboolean
stg_thermos_ports_settle (StgThermosJob *job, GError **error)
{
  g_autoptr (GHashTable) needed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GPtrArray) aliases = sorted_keys (job->portmap);
  g_autoptr (GPtrArray) refs = sorted_keys (job->port_refs);

  for (guint i = 0; i < aliases->len; i++)
    {
      const gchar *alias = aliases->pdata[i];
      const gchar *target = g_hash_table_lookup (job->portmap, alias);
      if (!good_name (alias))
        return stg_thermos_bad (error,
                                "announce.portmap: '%s' is not a port name (letters, "
                                "digits, '_', '-', '.', '/')",
                                alias);
      if (!good_name (target))
        return stg_thermos_bad (error,
                                "announce.portmap.%s: '%s' is neither a port name nor a "
                                "port number",
                                alias, target);
      const gchar *end = chain_end (job->portmap, alias, error);
      if (end == NULL)
        return FALSE;
      if (static_port (end) == 0 && !g_hash_table_contains (needed, end))
        g_hash_table_insert (needed, g_strdup (end),
                             g_strconcat ("announce.portmap.", alias, NULL));
    }
  for (guint i = 0; i < refs->len; i++)
    {
      const gchar *end = chain_end (job->portmap, refs->pdata[i], error);
      if (end == NULL)
        return FALSE;
      if (static_port (end) == 0 && !g_hash_table_contains (needed, end))
        g_hash_table_insert (needed, g_strdup (end),
                             g_strdup (g_hash_table_lookup (job->port_refs, refs->pdata[i])));
    }
  g_autoptr (GPtrArray) names = sorted_keys (needed);
  job->ports = g_new0 (gchar *, names->len + 1);
  for (guint i = 0; i < names->len; i++)
    job->ports[i] = g_strdup (names->pdata[i]);
  g_hash_table_unref (job->port_refs);
  job->port_refs = g_steal_pointer (&needed);
  return TRUE;
}

gboolean
stg_thermos_job_has_port (const StgThermosJob *job, const gchar *name)
{
  return g_strv_contains ((const gchar *const *) job->ports, name) ||
         g_hash_table_contains (job->portmap, name);
}

gboolean
stg_thermos_job_check_ports (const StgThermosJob *job, const gchar *const *declared, GError **error)
{
  for (guint i = 0; job->ports[i] != NULL; i++)
    {
      if (declared != NULL && g_strv_contains (declared, job->ports[i]))
        continue;
      g_autofree gchar *list = declared != NULL && declared[0] != NULL
                                   ? g_strjoinv (", ", (gchar **) declared)
                                   : g_strdup ("none");
      return stg_thermos_bad (error,
                              "%s needs port '%s', which the task does not ask for (its "
                              "named ports: %s)",
                              (const gchar *) g_hash_table_lookup (job->port_refs, job->ports[i]),
                              job->ports[i], list);
    }
  return TRUE;
}

/* The number for @name: assigned, or at the end of its alias chain. */
static gint
resolve_one (const StgThermosJob *job, GHashTable *assigned, const gchar *name)
{
  const gchar *at = name;

  for (guint steps = 0; steps <= g_hash_table_size (job->portmap); steps++)
    {
      gpointer number = NULL;
      if (g_hash_table_lookup_extended (assigned, at, NULL, &number))
        return GPOINTER_TO_INT (number);
      const gchar *next = g_hash_table_lookup (job->portmap, at);
      if (next == NULL)
        return static_port (at);
      at = next;
    }
  return 0;
}

GHashTable *
stg_thermos_job_resolve_ports (const StgThermosJob *job, GHashTable *assigned, GError **error)
{
  g_autoptr (GHashTable) all = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter it;
  gpointer key, value;

  for (guint i = 0; job->ports[i] != NULL; i++)
    if (!g_hash_table_contains (assigned, job->ports[i]))
      {
        stg_thermos_bad (error, "no port '%s' was assigned (the task needs %s)", job->ports[i],
                         (const gchar *) g_hash_table_lookup (job->port_refs, job->ports[i]));
        return NULL;
      }
  g_hash_table_iter_init (&it, assigned);
  while (g_hash_table_iter_next (&it, &key, &value))
    g_hash_table_insert (all, g_strdup (key), value);
  g_hash_table_iter_init (&it, job->portmap);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      gint number = resolve_one (job, assigned, key);
      if (number > 0 && !g_hash_table_contains (all, key))
        g_hash_table_insert (all, g_strdup (key), GINT_TO_POINTER (number));
    }
  return g_steal_pointer (&all);
}
