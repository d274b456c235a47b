/* tiers.h: task tiers, as Aurora's scheduler defines them: named sets of
 * traits (preemptible, revocable) a task picks with TaskConfig.tier, one of
 * them the default. A tier is a production tier when it is neither
 * preemptible nor revocable; only production decides anything in Stagger
 * (which tasks need quota), since it preempts nothing and runs nothing on
 * revocable resources. The tiers are Aurora's default tiers.json unless a
 * file of the same form replaces them (staggerd --tier-config, as Aurora's
 * -tier_config). Pure; any thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define STG_TIERS_ERROR (stg_tiers_error_quark ())
GQuark stg_tiers_error_quark (void);
typedef enum
{
  STG_TIERS_ERROR_FAILED,
  STG_TIERS_ERROR_INVALID
} StgTiersError;

typedef struct
{
  gchar *name;
  gboolean preemptible;
  gboolean revocable;
} StgTier;

typedef struct _StgTiers StgTiers;

/* Aurora's default tiers: preferred (production), preemptible (the
 * default) and revocable. */
StgTiers *stg_tiers_new_default (void);

/* Tiers from JSON text in the form of Aurora's tiers.json:
 * {"default": NAME, "tiers": {NAME: {"preemptible": BOOL, "revocable": BOOL}, ...}}.
 * Unknown keys, a missing or unknown default and an empty set of tiers are
 * errors (STG_TIERS_ERROR_INVALID) naming the key. */
StgTiers *stg_tiers_parse (const gchar *json, gssize len, GError **error);

/* stg_tiers_parse() of the file at @path; the error names the file. */
StgTiers *stg_tiers_load (const gchar *path, GError **error);

void stg_tiers_free (StgTiers *tiers);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgTiers, stg_tiers_free)

const gchar *stg_tiers_default_name (const StgTiers *tiers);

/* The tiers, sorted by name. */
guint stg_tiers_count (const StgTiers *tiers);
const StgTier *stg_tiers_get (const StgTiers *tiers, guint index);

/* The tier called @name, or NULL. */
const StgTier *stg_tiers_lookup (const StgTiers *tiers, const gchar *name);

/* Neither preemptible nor revocable. */
gboolean stg_tier_is_production (const StgTier *tier);

G_END_DECLS
