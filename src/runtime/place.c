/* place.c: the fleet's hosts from the config file, and placement
 * (see place.h). Pure functions; any thread. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/place.h"
#include "runtime/runtime.h"

#define HOST_GROUP_PREFIX "host "

static void
host_config_free (gpointer p)
{
  StgFleetHostConfig *h = p;

  g_free (h->name);
  g_free (h->endpoint);
  g_free (h->address);
  g_clear_pointer (&h->attributes, g_hash_table_unref);
  g_free (h->tls_cert);
  g_free (h->tls_key);
  g_free (h->tls_ca);
  g_free (h->registry_user);
  g_free (h->registry_password);
  g_free (h->registry_server);
  g_free (h);
}

void
stg_fleet_options_init (StgFleetOptions *o)
{
  o->hosts = g_ptr_array_new_with_free_func (host_config_free);
  o->poll_ms = 1000;
  o->lost_after_secs = 60;
  o->call_timeout_secs = 30;
}

void
stg_fleet_options_clear (StgFleetOptions *o)
{
  g_clear_pointer (&o->hosts, g_ptr_array_unref);
}

void
stg_fleet_options_copy (StgFleetOptions *to, const StgFleetOptions *from)
{
  stg_fleet_options_init (to);
  to->poll_ms = from->poll_ms;
  to->lost_after_secs = from->lost_after_secs;
  to->call_timeout_secs = from->call_timeout_secs;
  for (guint i = 0; from->hosts != NULL && i < from->hosts->len; i++)
    {
      const StgFleetHostConfig *f = from->hosts->pdata[i];
      StgFleetHostConfig *h = g_new0 (StgFleetHostConfig, 1);
      h->name = g_strdup (f->name);
      h->endpoint = g_strdup (f->endpoint);
      h->address = g_strdup (f->address);
      h->attributes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      GHashTableIter it;
      gpointer k, v;
      g_hash_table_iter_init (&it, f->attributes);
      while (g_hash_table_iter_next (&it, &k, &v))
        g_hash_table_insert (h->attributes, g_strdup (k), g_strdup (v));
      h->tls_cert = g_strdup (f->tls_cert);
      h->tls_key = g_strdup (f->tls_key);
      h->tls_ca = g_strdup (f->tls_ca);
      h->registry_user = g_strdup (f->registry_user);
      h->registry_password = g_strdup (f->registry_password);
      h->registry_server = g_strdup (f->registry_server);
      g_ptr_array_add (to->hosts, h);
    }
}

static gint
compare_hosts (gconstpointer a, gconstpointer b)
{
  const StgFleetHostConfig *x = *(StgFleetHostConfig *const *) a, *y = *(StgFleetHostConfig *const *) b;
  return strcmp (x->name, y->name);
}

static gboolean
name_valid (const gchar *name)
{
  if (name[0] == '\0' || strlen (name) > 64)
    return FALSE;
  for (const gchar *p = name; *p != '\0'; p++)
    if (!(g_ascii_isalnum (*p) || *p == '.' || *p == '_' || *p == '-'))
      return FALSE;
  return TRUE;
}

gboolean
stg_place_parse_attributes (gchar **items, const gchar *where, GHashTable *into, GError **error)
{
  for (guint i = 0; items != NULL && items[i] != NULL; i++)
    {
      g_autofree gchar *item = g_strstrip (g_strdup (items[i]));
      gchar *eq = strchr (item, '=');
      if (item[0] == '\0')
        continue;
      if (eq == NULL || eq == item || eq[1] == '\0')
        {
          g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                       "%s: \"%s\" is not NAME=VALUE", where, item);
          return FALSE;
        }
      *eq = '\0';
      g_strstrip (item);
      if (g_str_equal (item, "host"))
        {
          g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                       "%s: \"host\" is the host's own name and cannot be set", where);
          return FALSE;
        }
      g_hash_table_insert (into, g_strdup (item), g_strstrip (g_strdup (eq + 1)));
    }
  return TRUE;
}

/* "zone=a; rack=r1" (a list separated by ';') into @h->attributes. */
static gboolean
load_attributes (GKeyFile *kf, const gchar *group, StgFleetHostConfig *h, GError **error)
{
  g_auto (GStrv) items = g_key_file_get_string_list (kf, group, "attributes", NULL, NULL);
  g_autofree gchar *where = g_strdup_printf ("[%s] attributes", group);

  return stg_place_parse_attributes (items, where, h->attributes, error);
}

/* The default address: a tcp:// endpoint's host, else 127.0.0.1. */
static gchar *
default_address (const gchar *endpoint)
{
  if (!g_str_has_prefix (endpoint, "tcp://"))
    return g_strdup ("127.0.0.1");
  const gchar *host = endpoint + strlen ("tcp://");
  const gchar *colon = strrchr (host, ':');
  return colon ? g_strndup (host, (gsize) (colon - host)) : g_strdup (host);
}

static StgFleetHostConfig *
load_host (GKeyFile *kf, const gchar *group, GError **error)
{
  static const gchar *const known[] = {
    "endpoint", "address",       "attributes",        "tls_cert",        "tls_key",
    "tls_ca",   "registry_user", "registry_password", "registry_server", NULL
  };
  g_autoptr (GError) local = NULL;
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group, NULL, NULL);
  const gchar *name = group + strlen (HOST_GROUP_PREFIX);

  if (!name_valid (name))
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                   "[%s]: a host name has letters, digits, '.', '_' and '-' (at most 64)", group);
      return NULL;
    }
  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    if (!g_strv_contains (known, keys[i]))
      {
        g_set_error (
            error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND,
            "unknown key '%s' in [%s] (known: endpoint, address, attributes, tls_cert, tls_key, "
            "tls_ca, registry_user, registry_password, registry_server)",
            keys[i], group);
        return NULL;
      }
  StgFleetHostConfig *h = g_new0 (StgFleetHostConfig, 1);
  h->name = g_strdup (name);
  h->attributes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  h->endpoint = g_key_file_get_string (kf, group, "endpoint", &local);
  if (h->endpoint == NULL ||
      (!g_str_has_prefix (h->endpoint, "unix:///") && !g_str_has_prefix (h->endpoint, "tcp://")))
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                   "[%s] endpoint: expected unix:///PATH or tcp://HOST:PORT", group);
      host_config_free (h);
      return NULL;
    }
  h->address = g_key_file_get_string (kf, group, "address", NULL);
  if (h->address == NULL)
    h->address = default_address (h->endpoint);
  h->tls_cert = g_key_file_get_string (kf, group, "tls_cert", NULL);
  h->tls_key = g_key_file_get_string (kf, group, "tls_key", NULL);
  h->tls_ca = g_key_file_get_string (kf, group, "tls_ca", NULL);
  h->registry_user = g_key_file_get_string (kf, group, "registry_user", NULL);
  h->registry_password = g_key_file_get_string (kf, group, "registry_password", NULL);
  h->registry_server = g_key_file_get_string (kf, group, "registry_server", NULL);
  if ((h->registry_user == NULL) != (h->registry_password == NULL) ||
      (h->registry_server != NULL && h->registry_user == NULL))
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                   "[%s]: registry_user and registry_password go together (registry_server "
                   "only with them)",
                   group);
      host_config_free (h);
      return NULL;
    }
  if (!load_attributes (kf, group, h, error))
    {
      host_config_free (h);
      return NULL;
    }
  return h;
}

static gboolean
load_uint (GKeyFile *kf, const gchar *key, guint min, guint max, guint *out, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (!g_key_file_has_key (kf, "fleet", key, NULL))
    return TRUE;
  gint64 v = g_key_file_get_int64 (kf, "fleet", key, &local);
  if (local != NULL || v < min || v > max)
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                   "[fleet] %s: expected a whole number from %u to %u", key, min, max);
      return FALSE;
    }
  *out = (guint) v;
  return TRUE;
}

gboolean
stg_fleet_options_load (StgFleetOptions *o, GKeyFile *kf, GError **error)
{
  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  static const gchar *const fleet_keys[] = { "poll_interval_ms", "lost_after_secs", "call_timeout_secs", NULL };

  for (guint i = 0; groups[i] != NULL; i++)
    {
      if (!g_str_has_prefix (groups[i], HOST_GROUP_PREFIX))
        continue;
      StgFleetHostConfig *h = load_host (kf, groups[i], error);
      if (h == NULL)
        return FALSE;
      g_ptr_array_add (o->hosts, h);
    }
  g_ptr_array_sort (o->hosts, compare_hosts);
  for (guint i = 1; i < o->hosts->len; i++)
    if (compare_hosts (&o->hosts->pdata[i - 1], &o->hosts->pdata[i]) == 0)
      {
        g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE, "host %s is listed twice",
                     ((StgFleetHostConfig *) o->hosts->pdata[i])->name);
        return FALSE;
      }
  g_auto (GStrv) keys = g_key_file_get_keys (kf, "fleet", NULL, NULL);
  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    if (!g_strv_contains (fleet_keys, keys[i]))
      {
        g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND,
                     "unknown key '%s' in [fleet] (known: poll_interval_ms, lost_after_secs, call_timeout_secs)",
                     keys[i]);
        return FALSE;
      }
  return load_uint (kf, "poll_interval_ms", 50, 60000, &o->poll_ms, error) &&
         load_uint (kf, "lost_after_secs", 1, 86400, &o->lost_after_secs, error) &&
         load_uint (kf, "call_timeout_secs", 1, 3600, &o->call_timeout_secs, error);
}

/* ---- placement ------------------------------------------------------------ */

const gchar *
stg_fleet_host_attribute (const StgFleetHostConfig *host, const gchar *name)
{
  if (g_str_equal (name, "host"))
    return host->name;
  return g_hash_table_lookup (host->attributes, name);
}

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(const gchar *const *) a, *(const gchar *const *) b);
}

/* "a,b" of a value set, sorted, for messages. */
static gchar *
values_text (GHashTable *values)
{
  g_autofree gpointer *keys = g_hash_table_get_keys_as_array (values, NULL);
  guint n = g_hash_table_size (values);

  qsort (keys, n, sizeof (gpointer), compare_strings);
  g_autoptr (GString) s = g_string_new (NULL);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (s, "%s%s", i ? "," : "", (const gchar *) keys[i]);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* Why constraint @c rules out host @h (NULL: it does not). */
static gchar *
constraint_veto (const StgPlaceHost *hosts, guint h, const ApiConstraint *c, const GArray *job_hosts)
{
  const gchar *value = stg_fleet_host_attribute (hosts[h].config, c->name);

  if (c->constraint->__isset_limit)
    {
      if (value == NULL)
        return g_strdup_printf ("limit %s:%d: the host has no attribute %s", c->name, c->constraint->limit->limit,
                                c->name);
      gint count = 0;
      for (guint i = 0; job_hosts != NULL && i < job_hosts->len; i++)
        {
          const gchar *other = stg_fleet_host_attribute (hosts[g_array_index (job_hosts, gint, i)].config, c->name);
          count += g_strcmp0 (other, value) == 0;
        }
      if (count >= c->constraint->limit->limit)
        return g_strdup_printf ("limit %s:%d reached (%d on %s %s)", c->name, c->constraint->limit->limit, count,
                                c->name, value);
      return NULL;
    }
  const ApiValueConstraint *vc = c->constraint->value;
  gboolean member = value != NULL && g_hash_table_contains (vc->values, value);
  if (member == !vc->negated)
    return NULL;
  g_autofree gchar *set = values_text (vc->values);
  return g_strdup_printf ("%s %s{%s} (the host has %s)", c->name, vc->negated ? "not in " : "in ", set,
                          value ? value : "none");
}

/* Whether @constraints (nullable) name attribute @name. */
static gboolean
names (GHashTable *constraints, const gchar *name)
{
  GHashTableIter it;
  gpointer key;

  if (constraints == NULL)
    return FALSE;
  g_hash_table_iter_init (&it, constraints);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (g_str_equal (((const ApiConstraint *) key)->name, name))
      return TRUE;
  return FALSE;
}

/* The first of @constraints (nullable) that rules out host @h, judged in
 * Aurora's order: value constraints, then limits; NULL when none does. The
 * reason goes to *@detail. */
static const ApiConstraint *
first_veto (const StgPlaceHost *hosts, guint h, GHashTable *constraints, const GArray *job_hosts,
            gchar **detail)
{
  for (gint limits = 0; limits < 2 && constraints != NULL; limits++)
    {
      GHashTableIter it;
      gpointer key;
      g_hash_table_iter_init (&it, constraints);
      while (g_hash_table_iter_next (&it, &key, NULL))
        {
          const ApiConstraint *c = key;
          if (c->constraint->__isset_limit != limits)
            continue;
          *detail = constraint_veto (hosts, h, c, job_hosts);
          if (*detail != NULL)
            return c;
        }
    }
  return NULL;
}

/* @c in short, as `stagger job diff` names a constraint an instance
 * breaks: "limit:host=2", "zone in {a,b}", "zone not in {a}". */
static gchar *
constraint_text (const ApiConstraint *c)
{
  if (c->constraint->__isset_limit)
    return g_strdup_printf ("limit:%s=%d", c->name, c->constraint->limit->limit);
  g_autofree gchar *set = values_text (c->constraint->value->values);
  return g_strdup_printf ("%s %s{%s}", c->name, c->constraint->value->negated ? "not in " : "in ",
                          set);
}

/* Why host @h may not take an instance of a job with @constraints whose
 * other live instances sit on @job_hosts, or NULL: a host with a
 * "dedicated" attribute takes only jobs that ask for it, then constraints
 * as first_veto. *@aurora (nullable) gets Aurora's words for it, *@brief
 * (nullable) the constraint in short (constraint_text; "dedicated"). */
static gchar *
host_veto (const StgPlaceHost *hosts, guint h, GHashTable *constraints, const GArray *job_hosts,
           gchar **aurora, gchar **brief)
{
  const gchar *dedicated = stg_fleet_host_attribute (hosts[h].config, STG_PLACE_DEDICATED);
  gchar *detail = NULL;

  if (dedicated != NULL && !names (constraints, STG_PLACE_DEDICATED))
    {
      if (aurora != NULL)
        *aurora = g_strdup ("Host is dedicated");
      if (brief != NULL)
        *brief = g_strdup (STG_PLACE_DEDICATED);
      return g_strdup_printf ("dedicated to %s (the job has no dedicated constraint)", dedicated);
    }
  const ApiConstraint *c = first_veto (hosts, h, constraints, job_hosts, &detail);
  if (c != NULL && aurora != NULL)
    {
      /* A limit on an attribute the host lacks is a mismatch, as a value is. */
      gboolean limit = c->constraint->__isset_limit &&
                       stg_fleet_host_attribute (hosts[h].config, c->name);
      *aurora = g_strdup_printf ("%s not satisfied: %s", limit ? "Limit" : "Constraint", c->name);
    }
  if (c != NULL && brief != NULL)
    *brief = constraint_text (c);
  return detail;
}

gchar *
stg_place_veto (const StgPlaceHost *hosts, guint h, GHashTable *constraints,
                const GArray *job_hosts)
{
  gchar *aurora = NULL;

  g_free (host_veto (hosts, h, constraints, job_hosts, &aurora, NULL));
  return aurora;
}

gchar *
stg_place_broken (const StgPlaceHost *hosts, guint h, GHashTable *constraints,
                  const GArray *job_hosts, gchar **aurora)
{
  gchar *brief = NULL;

  g_free (host_veto (hosts, h, constraints, job_hosts, aurora, &brief));
  return brief;
}

gint
stg_fleet_place (const StgPlaceHost *hosts, guint n_hosts, GHashTable *constraints, const GArray *job_hosts,
                 gchar **why)
{
  g_autoptr (GString) reasons = g_string_new (NULL);
  g_autofree guint *of_job = g_new0 (guint, n_hosts + 1);
  gint best = -1;

  for (guint i = 0; job_hosts != NULL && i < job_hosts->len; i++)
    of_job[g_array_index (job_hosts, gint, i)]++;
  for (guint h = 0; h < n_hosts; h++)
    {
      g_autofree gchar *veto = hosts[h].unavailable != NULL
                                   ? g_strdup (hosts[h].unavailable)
                                   : host_veto (hosts, h, constraints, job_hosts, NULL, NULL);
      if (veto != NULL)
        {
          g_string_append_printf (reasons, "%s%s: %s", reasons->len ? "; " : "", hosts[h].config->name, veto);
          continue;
        }
      if (best < 0 || of_job[h] < of_job[best] || (of_job[h] == of_job[best] && hosts[h].total < hosts[best].total))
        best = (gint) h; /* hosts come in name order: the first name wins ties */
    }
  if (best < 0 && why != NULL)
    *why = n_hosts == 0 ? g_strdup ("no hosts are configured")
                        : g_strdup_printf ("no host fits: %s", reasons->str);
  return best;
}

gboolean
stg_fleet_check_constraints (GHashTable *constraints, GError **error)
{
  GHashTableIter it;
  gpointer key;

  if (constraints == NULL)
    return TRUE;
  g_hash_table_iter_init (&it, constraints);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      const ApiConstraint *c = key;
      const ApiTaskConstraint *tc = c->constraint;
      if (c->name == NULL || c->name[0] == '\0' || tc == NULL || tc->__isset_limit == tc->__isset_value)
        {
          g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                       "a constraint needs a name and exactly one of limit and value");
          return FALSE;
        }
      if (tc->__isset_limit && tc->limit->limit < 1)
        {
          g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                       "constraint %s: a limit must be at least 1, not %d", c->name, tc->limit->limit);
          return FALSE;
        }
      if (tc->__isset_value && g_hash_table_size (tc->value->values) == 0)
        {
          g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                       "constraint %s: a value constraint needs at least one value", c->name);
          return FALSE;
        }
    }
  return TRUE;
}
