/* settings.c: StgDaemonSettings: the table of config file keys, their
 * defaults, and the one loop that reads them.
 *
 * A key is one entry of SETTINGS: group, key, type, where it goes (a field
 * of StgDaemonSettings, or a function that parses the text), its default
 * and what it means. Groups of free-form keys ([users], [roles], [fleet]
 * [host NAME], [notify] and [notify NAME]) have a reader each. Calls the
 * runtime's fleet and notify options and instance_users.c. Main thread, at
 * start-up.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <sys/stat.h>

#include "common/error.h"
#include "common/host_policy.h"
#include "daemon/instance_users.h"
#include "daemon/settings.h"
#include "daemon/systemd.h"
#include "runtime/thermos_task.h"
#include "zk/zk.h"

typedef enum
{
  TYPE_STRING, /* gchar *: the text */
  TYPE_WORDS,  /* gchar **: words separated by commas or spaces */
  TYPE_FLAG,   /* gboolean: true or false */
  TYPE_INT,    /* gint from min to max */
  TYPE_INT64,  /* gint64 from min to max */
  TYPE_CHOICE, /* gboolean: one of two words, "FALSE|TRUE" in choices */
  TYPE_PARSED, /* the text, handed to parse(), which sets the fields */
} Type;

typedef gboolean (*Parse) (StgDaemonSettings *settings, const gchar *text, GError **error);

typedef struct
{
  const gchar *group;
  const gchar *key;
  Type type;
  glong field;       /* where it goes: an offset in StgDaemonSettings (not PARSED) */
  gint64 min, max;   /* INT and INT64 */
  gint64 number;     /* the default of FLAG, INT and INT64 */
  const gchar *text; /* the default of STRING and PARSED */
  Parse parse;       /* PARSED */
  const gchar *help;
  const gchar *choices; /* CHOICE: "FIRST|SECOND"; the first, the default, is FALSE */
} Setting;

/* The offset of @f in StgDaemonSettings, which must be a @T (a compile
 * error otherwise), and one macro per type for the table's entries. */
// clang-format off
#define AT(f, T) _Generic (((StgDaemonSettings *) 0)->f, T: G_STRUCT_OFFSET (StgDaemonSettings, f))
#define STRING(g, k, f, dflt, help) \
  { g, k, TYPE_STRING, AT (f, gchar *), 0, 0, 0, dflt, NULL, help }
#define WORDS(g, k, f, help) { g, k, TYPE_WORDS, AT (f, gchar **), 0, 0, 0, NULL, NULL, help }
#define FLAG(g, k, f, help) { g, k, TYPE_FLAG, AT (f, gboolean), 0, 0, FALSE, NULL, NULL, help }
#define INT(g, k, f, min, max, dflt, help) \
  { g, k, TYPE_INT, AT (f, gint), min, max, dflt, NULL, NULL, help }
#define INT64(g, k, f, min, max, dflt, help) \
  { g, k, TYPE_INT64, AT (f, gint64), min, max, dflt, NULL, NULL, help }
#define PARSED(g, k, parse, dflt, help) { g, k, TYPE_PARSED, 0, 0, 0, 0, dflt, parse, help }
#define CHOICE(g, k, f, first, second, help) \
  { g, k, TYPE_CHOICE, AT (f, gboolean), 0, 0, FALSE, first, NULL, help, first "|" second }
// clang-format on

#define S "staggerd"

static gboolean parse_gate_hosts (StgDaemonSettings *settings, const gchar *text, GError **error);
static gboolean parse_host_attributes (StgDaemonSettings *settings, const gchar *text,
                                       GError **error);
static gchar **split_words (const gchar *text);

/* Every key of the config file; staggerd(8) says the same at length. */
static const Setting SETTINGS[] = {
  STRING (S, "data_dir", data_dir, NULL, "default $STATE_DIRECTORY, else " STG_DATA_DIR),
  STRING (S, "bind", bind, "127.0.0.1", "the IP address both ports listen on"),
  INT (S, "http_port", http_port, 0, 65535, 8081, "the web UI, /api, /health; 0: any free"),
  INT (S, "thrift_port", thrift_port, 0, 65535, 8082, "framed binary Thrift; 0: any free port"),
  STRING (S, "cluster", cluster, "local", "the cluster's name, in every answer"),
  INT64 (S, "max_frame_bytes", max_frame, 1024, G_MAXINT32, 16 * 1024 * 1024, "one message"),
  INT (S, "idle_timeout_secs", idle_timeout_s, 0, 86400, 300, "TCP idle timeout; 0: none"),
  STRING (S, "webui_dir", webui_dir, NULL, "serve the web UI's files from here"),
  PARSED (S, "port_range", stg_daemon_settings_port_range, "20000-29999", "instances' ports"),
  PARSED (S, "runtime", stg_daemon_settings_runtime, "local", "local, simulated or fleet"),
  STRING (S, "tls_cert", tls_cert, NULL, "serve HTTPS with this PEM certificate"),
  STRING (S, "tls_key", tls_key, NULL, "the PEM private key of tls_cert"),
  FLAG (S, "read_requires_auth", read_requires_auth, "with [users]: reads need credentials"),
  FLAG (S, "tcp_trusted", tcp_trusted, "with [users]: the TCP port may change jobs too"),
  INT (S, "max_instances_per_job", max_instances, 1, 1000000, 0, "0: the runtime's default"),
  INT64 (S, "max_update_instance_failures", max_update_failures, 1, G_MAXINT64 / 2, 0,
         "per-instance failures x instances an update may allow; 0: 5 x max_instances_per_job"),
  WORDS (S, "http_names", http_names, "Host names served besides IPs and localhost"),
  WORDS (S, "allowed_origins", allowed_origins, "web origins that may change state"),
  INT (S, "tcp_backlog", tcp_backlog, 1, 65535, 4096, "the Thrift port's listen queue"),
  INT (S, "max_connections", max_connections, 1, 1000000, 4096, "open connections per port"),
  INT (S, "max_connections_per_address", max_per_address, 1, 1000000, 1024, "from one address"),
  INT64 (S, "max_buffered_bytes", max_buffered, 1024 * 1024, G_MAXINT64 / 2,
         STG_DAEMON_BUFFERED_MAX, "unfinished requests' bytes, both ports"),
  INT64 (S, "max_buffered_per_address", max_buffered_per_address, 64 * 1024, G_MAXINT64 / 2, 0,
         "... from one address; 0: one largest frame"),
  INT64 (S, "buffered_reserve_bytes", buffered_reserve, 0, G_MAXINT64 / 2,
         STG_DAEMON_BUFFERED_RESERVE, "... the last of them kept for small messages"),
  INT (S, "keep_updates_per_job", keep_updates, 0, 1000000, 100, "finished updates; 0: all"),
  INT (S, "keep_events_days", keep_events_days, 0, 100000, 30, "days of events kept; 0: all"),
  STRING (S, "advertise_url", advertise_url, NULL, "where other replicas send clients"),
  INT (S, "lease_ms", lease_ms, 400, 600000, 5000, "a silent leader loses the lead after this"),
  INT (S, "forget_replicas_secs", forget_replicas_s, 1, 366 * 86400, 3600,
       "a replica not seen this long leaves cluster status"),
  STRING (S, "instance_user", instance_user, NULL, "as root: other roles' instances' user"),
  FLAG (S, "allow_root_instances", allow_root_instances, "instances may run as root"),
  INT (S, "max_ports_per_role", max_ports_per_role, 0, 65535, 0, "0: half the port range"),
  INT (S, "max_concurrent_starts", max_concurrent_starts, 0, 100000, 0, "starting at once; 0: 100"),
  INT (S, "disk_collection_interval_secs", disk_interval_s, 1, 86400, 60,
       "local runtime: how often each sandbox's disk use is measured, against its diskMb"),
  STRING (S, "cgroup_parent", cgroup_parent, NULL,
          "local runtime: the control group instances' groups go in; default: \"stagger\" in "
          "staggerd's own"),
  CHOICE (S, "cpu_limit", cpu_share, "quota", "share",
          "local runtime: numCpus as a CFS quota (quota), or as a weight (share)"),
  INT64 (S, "max_pids", max_pids, 0, 4194304, 4096,
         "processes and threads per instance (local: its group; fleet: PidsLimit); 0: none"),
  PARSED (S, "host_attributes", parse_host_attributes, NULL,
          "local runtime: this host's attributes for constraints, \"zone=a; dedicated=db\""),
  STRING (S, "tier_config", tier_config, NULL, "task tiers, as Aurora's tiers.json"),
  STRING (S, "thermos_runner", thermos_runner, STG_THERMOS_RUNNER_DEFAULT,
          "stagger-thermos, which runs AuroraExecutor tasks"),
  STRING (S, "thermos_bundle", thermos_bundle, STG_THERMOS_BUNDLE_DEFAULT,
          "fleet: stagger-thermos's bundle for containers, on every host"),
  STRING (S, "anchor", anchor, STG_PKGLIBEXECDIR "/stagger-anchor",
          "fleet: stagger-anchor, imported into each host as the pods' anchor"),
  STRING ("store", "url", store, NULL, "PostgreSQL (URL or conninfo) instead of SQLite"),
  CHOICE ("store", "sqlite_synchronous", sqlite_normal_sync, "full", "normal",
          "full, or normal: no fsync a commit"),
  PARSED ("gates", "allowed_hosts", parse_gate_hosts, NULL,
          "where HTTP gates and webhooks may connect"),
  INT ("backup", "interval_secs", backup_interval_s, 0, 366 * 86400, 3600,
       "a backup of the SQLite store this often; 0: none"),
  INT ("backup", "keep", backup_keep, 1, 1000000, 48, "backups kept; the oldest go first"),
  INT ("sla", "min_required_instances", sla_min_instances, 0, 1000000, 20,
       "count and percentage SLAs apply to jobs this big"),
  INT64 ("sla", "max_duration_secs", sla_max_duration_s, 0, 366 * 86400, 7200,
         "the longest SLA duration a job may ask"),
  FLAG ("sla", "non_production", sla_non_production, "SLA policies for non-production tiers"),
  INT ("sla", "coordinator_timeout_secs", sla_coordinator_timeout_s, 1, 3600, 60,
       "an SLA coordinator's answer"),
  INT ("sla", "retry_min_secs", sla_retry_min_s, 1, 86400, 60, "an SLA checked again after"),
  INT ("sla", "retry_max_secs", sla_retry_max_s, 1, 86400, 300, "... doubling up to this"),
  INT ("maintenance", "polling_interval_secs", maintenance_poll_s, 1, 86400, 60,
       "draining hosts looked at this often"),
  STRING ("zookeeper", "ensemble", zk_ensemble, NULL, "host:port,... ServerSets are kept in"),
  INT ("zookeeper", "session_timeout_ms", zk_session_timeout_ms, 1000, 600000, 10000,
       "a silent session's members go after this"),
  STRING ("zookeeper", "serverset_path", zk_serverset_path, "/aurora",
          "instances are announced in PATH/ROLE/ENVIRONMENT/JOB"),
  FLAG ("zookeeper", "allow_custom_serverset_path", zk_allow_custom,
        "a task's announce.zk_path is honoured"),
  STRING ("zookeeper", "auth_config", zk_auth_config, NULL,
          "Aurora's ZooKeeper auth file: credentials and ACL"),
  STRING ("zookeeper", "scheduler_path", zk_scheduler_path, NULL,
          "the leading staggerd is the one member here"),
  STRING ("zookeeper", "hostname", zk_hostname, NULL, "the host announced endpoints name"),
};

/* Groups whose keys are all in SETTINGS: another key there is a typo. */
static const gchar *const CLOSED_GROUPS[] = { S,           "gates", "backup", "sla", "maintenance",
                                              "zookeeper", NULL };

/* ---- the parsed keys -------------------------------------------------------- */

gboolean
stg_daemon_settings_runtime (StgDaemonSettings *settings, const gchar *name, GError **error)
{
  if (!g_str_equal (name, "local") && !g_str_equal (name, "simulated") &&
      !g_str_equal (name, "fleet"))
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                   "unknown runtime '%s' (known: local, simulated, fleet)", name);
      return FALSE;
    }
  g_free (settings->runtime);
  settings->runtime = g_strdup (name);
  return TRUE;
}

gboolean
stg_daemon_settings_port_range (StgDaemonSettings *settings, const gchar *text, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (text, "-", 3);
  gint64 lo = 0, hi = 0;

  if (g_strv_length (parts) != 2 || !g_ascii_string_to_signed (parts[0], 10, 1, 65535, &lo, NULL) ||
      !g_ascii_string_to_signed (parts[1], 10, 1, 65535, &hi, NULL) || lo > hi)
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                   "port range '%s' is not MIN-MAX with 1 <= MIN <= MAX <= 65535", text);
      return FALSE;
    }
  settings->port_min = (gint) lo;
  settings->port_max = (gint) hi;
  return TRUE;
}

/* [gates] allowed_hosts: host name patterns, addresses, CIDR blocks; checked
 * now, so that a bad one stops staggerd at start. */
static gboolean
parse_gate_hosts (StgDaemonSettings *settings, const gchar *text, GError **error)
{
  g_auto (GStrv) words = split_words (text);
  g_autoptr (StgHostPolicy) hosts =
      stg_host_policy_new ((const gchar *const *) words, "[gates] allowed_hosts", error);

  if (hosts == NULL)
    return FALSE;
  g_strfreev (settings->gate_hosts);
  settings->gate_hosts = g_steal_pointer (&words);
  return TRUE;
}

/* host_attributes: "NAME=VALUE; ..." (as a fleet host's attributes). */
static gboolean
parse_host_attributes (StgDaemonSettings *settings, const gchar *text, GError **error)
{
  g_auto (GStrv) items = g_strsplit (text, ";", -1);
  g_autoptr (GHashTable) attributes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                             g_free);

  if (!stg_place_parse_attributes (items, "host_attributes", attributes, error))
    return FALSE;
  g_clear_pointer (&settings->host_attributes, g_hash_table_unref);
  settings->host_attributes = g_steal_pointer (&attributes);
  return TRUE;
}

/* ---- defaults, copies ------------------------------------------------------- */

void
stg_daemon_settings_init (StgDaemonSettings *settings)
{
  *settings = (StgDaemonSettings){ 0 };
  for (guint i = 0; i < G_N_ELEMENTS (SETTINGS); i++)
    {
      const Setting *s = &SETTINGS[i];
      gpointer field = G_STRUCT_MEMBER_P (settings, s->field);
      if (s->type == TYPE_STRING)
        *(gchar **) field = g_strdup (s->text);
      else if (s->type == TYPE_FLAG || s->type == TYPE_CHOICE)
        *(gboolean *) field = (gboolean) s->number;
      else if (s->type == TYPE_INT)
        *(gint *) field = (gint) s->number;
      else if (s->type == TYPE_INT64)
        *(gint64 *) field = s->number;
      else if (s->type == TYPE_PARSED && s->text != NULL && !s->parse (settings, s->text, NULL))
        g_assert_not_reached ();
    }
  settings->data_dir = stg_systemd_default_data_dir ();
  stg_fleet_options_init (&settings->fleet);
  stg_notify_options_init (&settings->notify);
}

void
stg_daemon_settings_clear (StgDaemonSettings *settings)
{
  for (guint i = 0; i < G_N_ELEMENTS (SETTINGS); i++)
    {
      gpointer field = G_STRUCT_MEMBER_P (settings, SETTINGS[i].field);
      if (SETTINGS[i].type == TYPE_STRING)
        g_clear_pointer ((gchar **) field, g_free);
      else if (SETTINGS[i].type == TYPE_WORDS)
        g_clear_pointer ((gchar ***) field, g_strfreev);
    }
  g_clear_pointer (&settings->ready_file, g_free);
  g_clear_pointer (&settings->runtime, g_free);
  g_clear_pointer (&settings->gate_hosts, g_strfreev);
  stg_fleet_options_clear (&settings->fleet);
  stg_notify_options_clear (&settings->notify);
  g_clear_pointer (&settings->users, g_hash_table_unref);
  g_clear_pointer (&settings->role_users, g_hash_table_unref);
  g_clear_pointer (&settings->host_attributes, g_hash_table_unref);
}

void
stg_daemon_settings_copy (StgDaemonSettings *to, const StgDaemonSettings *from)
{
  *to = *from;
  for (guint i = 0; i < G_N_ELEMENTS (SETTINGS); i++)
    {
      gpointer field = G_STRUCT_MEMBER_P (to, SETTINGS[i].field);
      if (SETTINGS[i].type == TYPE_STRING)
        *(gchar **) field = g_strdup (*(gchar **) field);
      else if (SETTINGS[i].type == TYPE_WORDS)
        *(gchar ***) field = g_strdupv (*(gchar ***) field);
    }
  to->ready_file = g_strdup (from->ready_file);
  to->runtime = g_strdup (from->runtime);
  to->gate_hosts = g_strdupv (from->gate_hosts);
  stg_fleet_options_copy (&to->fleet, &from->fleet);
  stg_notify_options_copy (&to->notify, &from->notify);
  to->users = from->users ? g_hash_table_ref (from->users) : NULL;
  to->role_users = from->role_users ? g_hash_table_ref (from->role_users) : NULL;
  to->host_attributes = from->host_attributes ? g_hash_table_ref (from->host_attributes) : NULL;
}

/* ---- the config file -------------------------------------------------------- */

/* Words separated by commas or spaces. */
static gchar **
split_words (const gchar *text)
{
  g_auto (GStrv) parts = g_strsplit_set (text, ", \t", -1);
  g_autoptr (GStrvBuilder) words = g_strv_builder_new ();

  for (guint i = 0; parts[i] != NULL; i++)
    if (parts[i][0] != '\0')
      g_strv_builder_add (words, parts[i]);
  return g_strv_builder_end (words);
}

/* Reads the number of @s, which @kf holds, into @out. */
static gboolean
load_number (GKeyFile *kf, const Setting *s, gint64 *out, GError **error)
{
  g_autoptr (GError) local = NULL;
  gint64 value = g_key_file_get_int64 (kf, s->group, s->key, &local);

  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (value < s->min || value > s->max)
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                   "must be between %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT, s->min, s->max);
      return FALSE;
    }
  *out = value;
  return TRUE;
}

/* Sets *@field to which of @s's two words @text is. */
static gboolean
load_choice (const Setting *s, const gchar *text, gboolean *field, GError **error)
{
  g_auto (GStrv) words = g_strsplit (s->choices, "|", 2);

  if (!g_str_equal (text, words[0]) && !g_str_equal (text, words[1]))
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE, "say %s or %s",
                   words[0], words[1]);
      return FALSE;
    }
  *field = g_str_equal (text, words[1]);
  return TRUE;
}

/* Reads setting @s, which @kf holds, into @settings. */
static gboolean
load_one (GKeyFile *kf, const Setting *s, StgDaemonSettings *settings, GError **error)
{
  gpointer field = G_STRUCT_MEMBER_P (settings, s->field);
  g_autoptr (GError) local = NULL;
  gint64 number = 0;

  if (s->type == TYPE_FLAG)
    {
      gboolean value = g_key_file_get_boolean (kf, s->group, s->key, &local);
      if (local != NULL)
        {
          g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                       "expected true or false");
          return FALSE;
        }
      *(gboolean *) field = value;
      return TRUE;
    }
  if (s->type == TYPE_INT || s->type == TYPE_INT64)
    {
      if (!load_number (kf, s, &number, error))
        return FALSE;
      if (s->type == TYPE_INT)
        *(gint *) field = (gint) number;
      else
        *(gint64 *) field = number;
      return TRUE;
    }
  g_autofree gchar *text = g_key_file_get_string (kf, s->group, s->key, error);
  if (text == NULL)
    return FALSE;
  if (s->type == TYPE_PARSED)
    return s->parse (settings, text, error);
  if (s->type == TYPE_CHOICE)
    return load_choice (s, text, field, error);
  if (s->type == TYPE_WORDS)
    {
      g_strfreev (*(gchar ***) field);
      *(gchar ***) field = split_words (text);
      return TRUE;
    }
  g_free (*(gchar **) field);
  *(gchar **) field = g_steal_pointer (&text);
  return TRUE;
}

/* Refuses a key of a closed group that SETTINGS does not name. */
static gboolean
check_known (GKeyFile *kf, const gchar *group, GError **error)
{
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group, NULL, NULL);

  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      guint s = 0;
      while (s < G_N_ELEMENTS (SETTINGS) &&
             !(g_str_equal (SETTINGS[s].group, group) && g_str_equal (SETTINGS[s].key, keys[i])))
        s++;
      if (s == G_N_ELEMENTS (SETTINGS))
        {
          g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND,
                       "unknown key '%s' in [%s]", keys[i], group);
          return FALSE;
        }
    }
  return TRUE;
}

/* [users]: name = HASH ROLE... (checked when the daemon starts). */
static gboolean
load_users (GKeyFile *kf, StgDaemonSettings *settings, GError **error)
{
  g_auto (GStrv) names = g_key_file_get_keys (kf, "users", NULL, NULL);

  (void) error;
  if (names == NULL)
    return TRUE;
  g_clear_pointer (&settings->users, g_hash_table_unref);
  settings->users = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (guint i = 0; names[i] != NULL; i++)
    g_hash_table_insert (settings->users, g_strdup (names[i]),
                         g_key_file_get_value (kf, "users", names[i], NULL));
  return TRUE;
}

static gboolean
load_fleet (GKeyFile *kf, StgDaemonSettings *settings, GError **error)
{
  return stg_fleet_options_load (&settings->fleet, kf, error);
}

static gboolean
load_notify (GKeyFile *kf, StgDaemonSettings *settings, GError **error)
{
  return stg_notify_options_load (&settings->notify, kf, error);
}

/* [zookeeper]: the ensemble, the paths and the auth file checked now, so
 * that a mistake stops staggerd at start rather than every announcement. */
static gboolean
check_zookeeper (GKeyFile *kf, StgDaemonSettings *settings, GError **error)
{
  g_autoptr (StgZkAuth) auth = NULL;

  (void) kf;
  if (settings->zk_ensemble == NULL)
    {
      if (settings->zk_scheduler_path != NULL)
        return stg_fail (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                         "[zookeeper] scheduler_path needs [zookeeper] ensemble");
      return TRUE;
    }
  if (!stg_zk_ensemble_check (settings->zk_ensemble, error) ||
      !stg_zk_path_check (settings->zk_serverset_path, error) ||
      (settings->zk_scheduler_path != NULL &&
       !stg_zk_path_check (settings->zk_scheduler_path, error)) ||
      (settings->zk_auth_config != NULL &&
       (auth = stg_zk_auth_load (settings->zk_auth_config, error)) == NULL))
    {
      g_prefix_error (error, "[zookeeper]: ");
      return FALSE;
    }
  return TRUE;
}

/* The readers of groups of free-form keys. */
static gboolean (*const GROUP_READERS[]) (GKeyFile *kf, StgDaemonSettings *settings,
                                          GError **error) = {
  load_fleet, load_notify, load_users, stg_daemon_load_roles, check_zookeeper,
};

gboolean
stg_daemon_settings_load (StgDaemonSettings *settings, const gchar *path, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  struct stat st;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, error))
    {
      g_prefix_error (error, "%s: ", path);
      return FALSE;
    }
  for (guint i = 0; CLOSED_GROUPS[i] != NULL; i++)
    if (!check_known (kf, CLOSED_GROUPS[i], error))
      {
        g_prefix_error (error, "%s: ", path);
        return FALSE;
      }
  for (guint i = 0; i < G_N_ELEMENTS (SETTINGS); i++)
    {
      const Setting *s = &SETTINGS[i];
      if (g_key_file_has_key (kf, s->group, s->key, NULL) && !load_one (kf, s, settings, error))
        {
          g_prefix_error (error, "%s: [%s] %s: ", path, s->group, s->key);
          return FALSE;
        }
    }
  for (guint i = 0; i < G_N_ELEMENTS (GROUP_READERS); i++)
    if (!GROUP_READERS[i](kf, settings, error))
      {
        g_prefix_error (error, "%s: ", path);
        return FALSE;
      }
  if (settings->users != NULL && g_stat (path, &st) == 0 && (st.st_mode & 077) != 0)
    g_warning ("staggerd: %s holds [users] and other users may read it: chmod 600 it", path);
  return TRUE;
}
