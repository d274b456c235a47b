/* fleet_hosts.h: the fleet runtime's hosts and where an instance goes.
 *
 * Owns the hosts' configuration, read from staggerd's config file (a
 * [host NAME] group per host: endpoint, address, attributes, TLS files,
 * registry credentials; a
 * [fleet] group for the runtime's timings), and placement: which host an
 * instance goes to under Aurora's constraints (limit per host or attribute
 * value, value sets), choosing the host with the fewest instances of its
 * job, then the fewest overall, then the first name. Pure functions of
 * their inputs; calls no other layer. Any thread.
 */
#pragma once

#include <glib.h>

#include "common/thrift_glue.h"

G_BEGIN_DECLS

typedef struct
{
  gchar *name;            /* the group's NAME; also the "host" attribute */
  gchar *endpoint;        /* unix:///PATH or tcp://HOST:PORT */
  gchar *address;         /* where instances are reached (health checks, users) */
  GHashTable *attributes; /* name -> value */
  gchar *tls_cert;        /* tcp:// with TLS: client certificate, key, CA */
  gchar *tls_key;
  gchar *tls_ca;
  gchar *registry_user; /* (nullable) credentials the engine pulls images with */
  gchar *registry_password;
  gchar *registry_server; /* (nullable) the registry they are for; default: the image's */
} StgFleetHostConfig;

typedef struct
{
  GPtrArray *hosts;       /* StgFleetHostConfig*, in name order */
  guint poll_ms;          /* how often each host's containers are listed; default 1000 */
  guint lost_after_secs;  /* unreachable this long: its instances are LOST; default 60 */
  guint call_timeout_secs;/* an engine call without data this long fails; default 30 */
} StgFleetOptions;

void stg_fleet_options_init (StgFleetOptions *options);
void stg_fleet_options_clear (StgFleetOptions *options);
/* A deep copy of @from into @to (initialised). */
void stg_fleet_options_copy (StgFleetOptions *to, const StgFleetOptions *from);

/* Reads every [host NAME] group and the [fleet] group of @kf, checking
 * each key; errors name the group and key. */
gboolean stg_fleet_options_load (StgFleetOptions *options, GKeyFile *kf, GError **error);

/* ---- placement ------------------------------------------------------------ */

/* A host as placement sees it. */
typedef struct
{
  const StgFleetHostConfig *config;
  const gchar *unavailable; /* why nothing may be placed there now ("unreachable",
                             * "draining", ...); NULL: up, reconciled and open */
  guint total;            /* instances of every job placed there */
} StgPlaceHost;

/* The index in @hosts of the host for a new instance of a job whose
 * constraints are @constraints (set of ApiConstraint*, nullable) and whose
 * other live instances sit on @job_hosts (indexes into @hosts, may repeat);
 * -1 when none fits, with *@why (nullable) saying which constraint failed
 * on each host. */
gint stg_fleet_place (const StgPlaceHost *hosts, guint n_hosts, GHashTable *constraints,
                      const GArray *job_hosts, gchar **why);

/* The value of attribute @name of @host ("host" is its name), or NULL. */
const gchar *stg_fleet_host_attribute (const StgFleetHostConfig *host, const gchar *name);

/* Checks @constraints for the fleet: names and values not empty, limits
 * from 1. */
gboolean stg_fleet_check_constraints (GHashTable *constraints, GError **error);

G_END_DECLS
