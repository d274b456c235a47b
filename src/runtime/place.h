/* place.h: the hosts of the fleet runtime and where an instance goes,
 * for both runtimes.
 *
 * Owns the hosts' configuration, read from staggerd's config file (a
 * [host NAME] group per host: endpoint, address, attributes, TLS files,
 * registry credentials; a
 * [fleet] group for the runtime's timings), and placement: which host an
 * instance goes to under Aurora's constraints (dedicated hosts, limit per
 * host or attribute value, value sets), choosing the host with the fewest
 * instances of its job, then the fewest overall, then the first name; the
 * local runtime judges its one host with the same rules (stg_place_veto).
 * Pure functions of
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

/* The attribute of a host kept for the jobs that ask for it (Aurora's
 * dedicated hosts). */
#define STG_PLACE_DEDICATED "dedicated"

/* Why host @h of @hosts may not take an instance of a job with
 * @constraints (nullable) whose other live instances sit on @job_hosts, in
 * Aurora's words as getPendingReason gives them ("Host is dedicated",
 * "Constraint not satisfied: NAME", "Limit not satisfied: NAME"); NULL
 * when it may. The same judgement as stg_fleet_place's, its availability
 * aside. */
gchar *stg_place_veto (const StgPlaceHost *hosts, guint h, GHashTable *constraints,
                       const GArray *job_hosts);

/* The constraint of @constraints (nullable) that host @h breaks for an
 * instance of the job already there, whose other live instances sit on
 * @job_hosts: in short ("limit:host=2", "zone in {a,b}", "zone not in
 * {a}", "dedicated"), with Aurora's words in *@aurora (nullable) as
 * stg_place_veto gives them; NULL when the host still fits. The same
 * judgement as stg_place_veto's: a constraint tightened since the
 * instance was placed is what makes it break. */
gchar *stg_place_broken (const StgPlaceHost *hosts, guint h, GHashTable *constraints,
                         const GArray *job_hosts, gchar **aurora);

/* The value of attribute @name of @host ("host" is its name), or NULL. */
const gchar *stg_fleet_host_attribute (const StgFleetHostConfig *host, const gchar *name);

/* Host attributes, "NAME=VALUE" each (blank items skipped), into @into
 * (name -> value, both owned); errors begin with @where. "host" is the
 * host's own name and cannot be set. */
gboolean stg_place_parse_attributes (gchar **items, const gchar *where, GHashTable *into,
                                     GError **error);

/* Checks @constraints for the fleet: names and values not empty, limits
 * from 1. */
gboolean stg_fleet_check_constraints (GHashTable *constraints, GError **error);

G_END_DECLS
