/* connect.h: where the CLI connects and with which credentials.
 *
 * The URL: --url (given once per replica of a cluster, or once), else
 * STAGGER_URL, else the cluster's entry in a clusters file (the user's,
 * then the system's), else http://127.0.0.1:8081. A
 * command that names no cluster takes the only cluster of the first
 * clusters file there is; one that lists several is an error. The
 * credentials: --auth-user USER:PASSWORD (or USER, with the password asked on
 * the terminal), else STAGGER_TOKEN (a Bearer token), else the cluster's
 * entry in the user's credentials file, which must be readable by its
 * owner only. How long to look for a leading replica through a takeover:
 * --leader-wait, else STAGGER_LEADER_WAIT (seconds), else
 * STG_CLI_DEFAULT_LEADER_WAIT_MS. Everything is passed in (StgCliSources), so tests can check
 * the order without touching the real environment. One thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define STG_CLI_DEFAULT_URL "http://127.0.0.1:8081"
#define STG_CLI_SYSTEM_CONFIG_DIR "/etc/stagger"
/* Two leases of staggerd's default (5 s): the lock passes within one, and
 * the new leader starts serving soon after. */
#define STG_CLI_DEFAULT_LEADER_WAIT_MS 10000

/* Asks for a password; NULL when it cannot (no terminal). */
typedef gchar *(*StgCliPrompt) (const gchar *question, gpointer data);

typedef struct
{
  const gchar *const *url_options;  /* (nullable) --url, once or once per replica */
  gdouble leader_wait_option;       /* --leader-wait in seconds; NAN: not given */
  const gchar *env_leader_wait;     /* STAGGER_LEADER_WAIT */
  const gchar *user_option;         /* --auth-user */
  const gchar *env_url;             /* STAGGER_URL */
  const gchar *env_token;           /* STAGGER_TOKEN */
  const gchar *env_ca_file;         /* STAGGER_CA_FILE */
  const gchar *user_config_dir;     /* ~/.config/stagger */
  const gchar *system_config_dir;   /* /etc/stagger */
  const gchar *cluster;             /* (nullable) the cluster the command names */
  StgCliPrompt prompt;              /* (nullable) */
  gpointer prompt_data;
  gchar *owned_dir;                 /* what user_config_dir points to, when init made it */
} StgCliSources;

/* Fills @sources from the process's environment and the real
 * directories; the options and cluster are left NULL. */
void stg_cli_sources_init (StgCliSources *sources);
void stg_cli_sources_clear (StgCliSources *sources);

typedef struct
{
  gchar *base_url;      /* as given, without a trailing '/' */
  gchar *api_url;       /* where Thrift goes: base_url + "/api" */
  gchar *url_from;      /* "--url", "STAGGER_URL", a clusters file's path, "the default" */
  gchar *user;          /* (nullable) Basic */
  gchar *password;
  gchar *token;         /* (nullable) Bearer */
  gchar *credentials_from;  /* (nullable) "--auth-user", "STAGGER_TOKEN", a credentials file */
  gchar *ca_file;       /* (nullable) */
  gchar **replicas;     /* (nullable) the base URLs of a cluster's replicas, when its
                         * clusters file entry or --url lists several; base_url is the
                         * first */
  guint leader_wait_ms; /* how long to look for a leader through a takeover */
  gchar *zk_ensemble;   /* (nullable) a clusters file's zk entry: the leader is found in */
  gchar *zk_path;       /* the ServerSet scheduler_zk_path names, again through a takeover */
} StgCliTarget;

void stg_cli_target_free (StgCliTarget *target);

/* For the transport (StgReplicaFinder): @target's replicas found again in
 * ZooKeeper, or NULL. */
gchar **stg_cli_target_refind (gpointer target);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgCliTarget, stg_cli_target_free)

/* Resolves the URL and credentials. Errors: STG_CLI_ERROR_USAGE for a bad
 * --url or --auth-user, STG_CLI_ERROR_CONFIG for a bad clusters or credentials
 * file (unreadable, not JSON, or readable by others). */
StgCliTarget *stg_cli_target_resolve (const StgCliSources *sources, GError **error);

G_END_DECLS
