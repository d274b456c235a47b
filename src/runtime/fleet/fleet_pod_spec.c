/* fleet_pod_spec.c: what the fleet runtime asks an engine to create for a
 * pod besides its main container (fleet_container.c): the anchor, which
 * holds the namespace, the shared volume, the published ports and the
 * socket-activated sidecars' listening sockets, and each sidecar's
 * containers, joined to it. A sidecar's container runs its image with its
 * command (through the anchor's copy of stagger-anchor when the anchor
 * hands it its sockets), the pod's named ports in PORT_<NAME>, and
 * STAGGER_VERSION and STAGGER_VERSION_ALT: its own version and the other
 * slot's, so each side of a hot upgrade knows which one it is, also on a
 * rollback; an empty slot runs `stagger-anchor sleep` from the anchor
 * image with STAGGER_VERSION 0. Calls the store. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "runtime/fleet/fleet_private.h"

#define ANCHOR_STOP_SECS 2

/* The container name of @slot's pod's part @what ("anchor", "proxy-1"). */
static gchar *
pod_name (Slot *slot, const gchar *what)
{
  return g_strdup_printf ("stagger-%.12s-%s.%s.%s-%d-%" G_GINT64_FORMAT "-%s", slot->rt->marker,
                          slot->base.job->role, slot->base.job->environment, slot->base.job->name,
                          slot->base.key.instance, slot->base.run_id, what);
}

static void
add_strings (JsonBuilder *b, const gchar *member, const gchar *const *values)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_array (b);
  for (guint i = 0; values != NULL && values[i] != NULL; i++)
    json_builder_add_string_value (b, values[i]);
  json_builder_end_array (b);
}

static void
add_int (JsonBuilder *b, const gchar *member, gint64 value)
{
  json_builder_set_member_name (b, member);
  json_builder_add_int_value (b, value);
}

/* PortBindings publishing every port of @ports on the same number. */
static void
add_bindings (JsonBuilder *b, GHashTable *ports)
{
  GHashTableIter it;
  gpointer value;

  json_builder_set_member_name (b, "PortBindings");
  json_builder_begin_object (b);
  g_hash_table_iter_init (&it, ports);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      g_autofree gchar *key = g_strdup_printf ("%d/tcp", GPOINTER_TO_INT (value));
      g_autofree gchar *port = g_strdup_printf ("%d", GPOINTER_TO_INT (value));
      json_builder_set_member_name (b, key);
      json_builder_begin_array (b);
      json_builder_begin_object (b);
      stg_fleet_json_string (b, "HostPort", port);
      json_builder_end_object (b);
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
}

/* The anchor's command: hold, the volume, NAME=PORT of each held socket. */
static GPtrArray *
anchor_command (Slot *slot, GHashTable *ports)
{
  GPtrArray *argv = g_ptr_array_new_with_free_func (g_free);

  g_ptr_array_add (argv, g_strdup ("/stagger-anchor"));
  g_ptr_array_add (argv, g_strdup ("hold"));
  g_ptr_array_add (argv, g_strdup (STG_FLEET_POD_DIR));
  GPtrArray *boxes = slot->pod->boxes;

  for (guint i = 0; i < boxes->len; i++)
    {
      const gchar *const *held = stg_fleet_box_held_ports (boxes->pdata[i]);
      for (guint j = 0; held != NULL && held[j] != NULL; j++)
        g_ptr_array_add (argv,
                         g_strdup_printf ("%s=%d", held[j],
                                          GPOINTER_TO_INT (g_hash_table_lookup (ports, held[j]))));
    }
  g_ptr_array_add (argv, NULL);
  return argv;
}

JsonNode *
stg_fleet_anchor_spec (Slot *slot, gchar **name, GError **error)
{
  g_autoptr (ApiTaskConfig) config = stg_store_get_config (slot->rt->store, slot->container_config,
                                                           error);
  g_autoptr (GHashTable) ports = config ? stg_fleet_pod_ports (slot, error) : NULL;

  if (ports == NULL)
    return NULL;
  const gchar *network = stg_fleet_parameter (config, "network");
  const gchar *hostname = stg_fleet_parameter (config, "hostname");
  g_autoptr (GPtrArray) argv = anchor_command (slot, ports);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  stg_fleet_json_string (b, "Image", slot->rt->anchor_image);
  add_strings (b, "Cmd", (const gchar *const *) argv->pdata);
  json_builder_set_member_name (b, "Volumes");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, STG_FLEET_POD_DIR);
  json_builder_begin_object (b);
  json_builder_end_object (b);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "Labels");
  json_builder_begin_object (b);
  stg_fleet_base_labels (b, slot, slot->base.run_id);
  stg_fleet_json_string (b, STG_FLEET_LABEL_ROLE, "anchor");
  json_builder_end_object (b);
  add_int (b, "StopTimeout", ANCHOR_STOP_SECS);
  if (hostname != NULL)
    stg_fleet_json_string (b, "Hostname", hostname);
  json_builder_set_member_name (b, "HostConfig");
  json_builder_begin_object (b);
  if (network != NULL)
    stg_fleet_json_string (b, "NetworkMode", network);
  json_builder_set_member_name (b, "Init");
  json_builder_add_boolean_value (b, FALSE);
  if (g_strcmp0 (network, "host") != 0)
    add_bindings (b, ports);
  json_builder_end_object (b);
  json_builder_end_object (b);
  *name = pod_name (slot, "anchor");
  return json_builder_get_root (b);
}

/* ---- a sidecar's containers --------------------------------------------------- */

/* STAGGER_* and every port of the pod. */
static void
add_member_env (JsonBuilder *b, Slot *slot, const StgFleetMember *m, const gchar *slot_name,
                GHashTable *ports)
{
  GHashTableIter it;
  gpointer key, value;

  g_hash_table_iter_init (&it, ports);
  while (g_hash_table_iter_next (&it, &key, &value))
    if (strstr (key, ".probe") == NULL)
      {
        g_autofree gchar *var = stg_fleet_port_var (key);
        g_autofree gchar *e = g_strdup_printf ("%s=%d", var, GPOINTER_TO_INT (value));
        json_builder_add_string_value (b, e);
      }
  g_autofree gchar *first =
      m->sidecar && m->sidecar->ports && m->sidecar->ports->len > 0
          ? g_strdup_printf ("PORT=%d",
                             GPOINTER_TO_INT (
                                 g_hash_table_lookup (ports, m->sidecar->ports->pdata[0])))
          : NULL;
  g_autofree gchar *instance = g_strdup_printf ("STAGGER_INSTANCE=%d", slot->base.key.instance);
  g_autofree gchar *version = g_strdup_printf ("STAGGER_VERSION=%d", m->version);
  g_autofree gchar *alt = g_strdup_printf ("STAGGER_VERSION_ALT=%d", m->alt);
  g_autofree gchar *sidecar = g_strdup_printf ("STAGGER_SIDECAR=%s", m->set);
  g_autofree gchar *which = g_strdup_printf ("STAGGER_SIDECAR_SLOT=%s", slot_name);
  const gchar *vars[] = { instance, version, alt, sidecar, which, first, NULL };
  for (guint i = 0; vars[i] != NULL; i++)
    json_builder_add_string_value (b, vars[i]);
}

/* The command of a version of the sidecar: through the anchor's copy of
 * stagger-anchor (Entrypoint) when the anchor holds its sockets. */
static gboolean
add_member_command (JsonBuilder *b, const StgFleetMember *m, const StgTemplateVars *vars,
                    GHashTable *ports, GError **error)
{
  const StgExecutorSpec *spec = m->spec;
  g_autoptr (GPtrArray) cmd = g_ptr_array_new_with_free_func (g_free);

  if (m->activation)
    {
      g_autoptr (GPtrArray) entry = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (GString) names = g_string_new (NULL);
      for (guint i = 0; i < m->sidecar->ports->len; i++)
        g_string_append_printf (names, "%s%s", i > 0 ? "," : "",
                                (const gchar *) m->sidecar->ports->pdata[i]);
      g_ptr_array_add (entry, g_strdup (STG_FLEET_POD_DIR "/stagger-anchor"));
      g_ptr_array_add (entry, g_strdup ("exec"));
      g_ptr_array_add (entry, g_strdup (STG_FLEET_POD_DIR));
      g_ptr_array_add (entry, g_strdup (names->str));
      if (m->hot)
        {
          g_autofree gchar *probe = stg_fleet_probe_port_name (m->set, m->index);
          g_ptr_array_add (entry, g_strdup ("--probe"));
          g_ptr_array_add (entry, g_strdup_printf ("%d", GPOINTER_TO_INT (
                                                             g_hash_table_lookup (ports, probe))));
        }
      g_ptr_array_add (entry, g_strdup ("--"));
      g_ptr_array_add (entry, NULL);
      add_strings (b, "Entrypoint", (const gchar *const *) entry->pdata);
    }
  if (spec->command != NULL)
    {
      g_autofree gchar *line = stg_executor_shell_command (spec);
      g_autofree gchar *expanded = stg_template_expand (line, vars, NULL, error);
      if (expanded == NULL)
        return FALSE;
      g_ptr_array_add (cmd, g_strdup ("/bin/sh"));
      g_ptr_array_add (cmd, g_strdup ("-c"));
      g_ptr_array_add (cmd, g_steal_pointer (&expanded));
    }
  for (guint i = 0; spec->command == NULL && spec->argv != NULL && spec->argv[i] != NULL; i++)
    {
      gchar *arg = stg_template_expand (spec->argv[i], vars, NULL, error);
      if (arg == NULL)
        return FALSE;
      g_ptr_array_add (cmd, arg);
    }
  g_ptr_array_add (cmd, NULL);
  add_strings (b, "Cmd", (const gchar *const *) cmd->pdata);
  return TRUE;
}

static void
add_member_labels (JsonBuilder *b, Slot *slot, const StgFleetMember *m)
{
  g_autofree gchar *index = g_strdup_printf ("%u", m->index + 1);
  g_autofree gchar *version = g_strdup_printf ("%d", m->version);

  json_builder_set_member_name (b, "Labels");
  json_builder_begin_object (b);
  stg_fleet_base_labels (b, slot, slot->base.run_id);
  stg_fleet_json_string (b, STG_FLEET_LABEL_ROLE, "sidecar");
  stg_fleet_json_string (b, STG_FLEET_LABEL_SIDECAR, m->set);
  stg_fleet_json_string (b, STG_FLEET_LABEL_SLOT, index);
  stg_fleet_json_string (b, STG_FLEET_LABEL_VERSION, version);
  json_builder_end_object (b);
}

JsonNode *
stg_fleet_member_spec (Slot *slot, const StgFleetMember *m, gchar **name, GError **error)
{
  g_autoptr (GHashTable) ports = stg_fleet_pod_ports (slot, error);
  g_autofree gchar *slot_name = m->hot ? g_strdup_printf ("%s-%u", m->set, m->index + 1)
                                       : g_strdup (m->set);
  gboolean empty = m->sidecar == NULL;

  if (ports == NULL)
    return NULL;
  StgTemplateVars vars = stg_slot_template_vars (&slot->base, slot->rt->options.cluster, m->version,
                                                 ports);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  stg_fleet_json_string (b, "Image", empty ? slot->rt->anchor_image : m->sidecar->image);
  if (empty)
    {
      const gchar *argv[] = { "/stagger-anchor", "sleep", NULL };
      add_strings (b, "Cmd", argv);
    }
  else if (!add_member_command (b, m, &vars, ports, error))
    return NULL;
  json_builder_set_member_name (b, "Env");
  json_builder_begin_array (b);
  for (guint i = 0; !empty && m->spec->env != NULL && m->spec->env[i] != NULL; i++)
    {
      g_autofree gchar *e = stg_template_expand (m->spec->env[i], &vars, NULL, error);
      if (e == NULL)
        return NULL;
      json_builder_add_string_value (b, e);
    }
  add_member_env (b, slot, m, slot_name, ports);
  json_builder_end_array (b);
  add_member_labels (b, slot, m);
  add_int (b, "StopTimeout",
           empty ? ANCHOR_STOP_SECS : (gint64) (m->spec->stop_timeout_secs + 0.999));
  json_builder_set_member_name (b, "HostConfig");
  json_builder_begin_object (b);
  stg_fleet_pod_main_host_config (slot, b);
  json_builder_set_member_name (b, "Init");
  json_builder_add_boolean_value (b, !empty);
  json_builder_end_object (b);
  json_builder_end_object (b);
  *name = pod_name (slot, slot_name);
  return json_builder_get_root (b);
}

/* ---- the pod's ports ------------------------------------------------------------ */

GHashTable *
stg_fleet_pod_ports (Slot *slot, GError **error)
{
  g_autoptr (ApiTaskConfig) config = stg_store_get_config (slot->rt->store,
                                                           slot->container_config
                                                               ? slot->container_config
                                                               : slot->base.want,
                                                           error);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

  if (config == NULL)
    return NULL;
  g_auto (GStrv) task = stg_task_port_names (config);
  for (guint i = 0; task[i] != NULL; i++)
    g_ptr_array_add (names, g_strdup (task[i]));
  for (guint i = 0; slot->pod != NULL && i < slot->pod->boxes->len; i++)
    {
      g_auto (GStrv) own = stg_fleet_box_port_names (slot->pod->boxes->pdata[i]);
      for (guint j = 0; own != NULL && own[j] != NULL; j++)
        g_ptr_array_add (names, g_strdup (own[j]));
    }
  g_ptr_array_add (names, NULL);
  return stg_fleet_slot_ports (slot, (gchar **) names->pdata, error);
}
