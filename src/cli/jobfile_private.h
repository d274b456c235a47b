/* jobfile_private.h: what the job-file parser's files share: typed reads of
 * JSON members that report the file, the JSON path and what was expected.
 * Not for use outside src/cli/jobfile*.c. Any thread.
 */
#pragma once

#include <json-glib/json-glib.h>

#include "cli/jobfile.h"

G_BEGIN_DECLS

/* The parse in progress: the file name for messages. */
typedef struct
{
  const gchar *file;
} StgJfCtx;

/* The keys of each section of a job file (NULL-terminated). */
extern const gchar *const stg_jf_top_keys[];
extern const gchar *const stg_jf_resources_keys[];
extern const gchar *const stg_jf_metadata_keys[];
extern const gchar *const stg_jf_task_keys[];
extern const gchar *const stg_jf_hooks_keys[];
extern const gchar *const stg_jf_hook_keys[];
extern const gchar *const stg_jf_health_keys[];
extern const gchar *const stg_jf_checker_keys[];
extern const gchar *const stg_jf_http_keys[];
extern const gchar *const stg_jf_shell_keys[];
extern const gchar *const stg_jf_update_keys[];
extern const gchar *const stg_jf_strategy_keys[];
extern const gchar *const stg_jf_queue_keys[];
extern const gchar *const stg_jf_batch_keys[];
extern const gchar *const stg_jf_variable_batch_keys[];

/* Reads the file at @path (@what it should be, e.g. "a job file", for
 * the error a folder gets) into *@text (and its length, @len nullable). */
gboolean stg_jf_read_file (const gchar *path, const gchar *what, gchar **text, gsize *len,
                           GError **error);

/* The port names of @list (nullable: none) at @where: strings of letters,
 * digits, _ and -, none twice (NULL-terminated), or NULL with @error. */
GStrv stg_jf_port_names (const StgJfCtx *c, JsonArray *list, const gchar *where, GError **error);

/* "parent.key" (or "key" at the top), and "parent[i]". */
gchar *stg_jf_path (const gchar *parent, const gchar *key);
gchar *stg_jf_index (const gchar *parent, guint i);

/* Sets @error to "<file>: <path>: <message>" ("<file>: <message>" when
 * @path is empty) with @code; returns FALSE. */
gboolean stg_jf_fail (const StgJfCtx *c, GError **error, StgJobFileError code, const gchar *path,
                      const gchar *format, ...) G_GNUC_PRINTF (5, 6);

/* "the string \"x\"", "the number 3", "an object", ...: how a value reads
 * in a message. */
gchar *stg_jf_describe (JsonNode *node);

/* Fails on the first member of @object not in @known (NULL-terminated),
 * suggesting the closest known key, or the section the key belongs in. */
gboolean stg_jf_check_keys (const StgJfCtx *c, JsonObject *object, const gchar *path,
                            const gchar *const *known, GError **error);

/* Typed members. Each leaves *@out alone when the member is absent (so it
 * holds the default) and sets *@present (nullable) to whether it was there.
 * A required member that is absent is an error. */
gboolean stg_jf_int_value (const StgJfCtx *c, JsonNode *node, const gchar *where, gint64 min,
                           gint64 max, gint64 *out, GError **error);
gboolean stg_jf_int (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
                     gint64 min, gint64 max, gint64 *out, gboolean *present, GError **error);
gboolean stg_jf_number (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
                        gdouble min, gboolean min_included, gdouble max, gdouble *out,
                        gboolean *present, GError **error);
gboolean stg_jf_bool (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
                      gboolean *out, gboolean *present, GError **error);
/* A count from @min to @max, or a percent as a string "N%" (N from 0 to
 * 100, decimals allowed): *@percent is then N and *@out is left alone;
 * otherwise *@percent is -1. */
gboolean stg_jf_count_or_percent (const StgJfCtx *c, JsonObject *object, const gchar *path,
                                  const gchar *key, gint64 min, gint64 max, gint64 *out,
                                  gdouble *percent, GError **error);
/* A non-empty string; *@out is a new copy. */
gboolean stg_jf_string (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
                        gboolean required, gchar **out, GError **error);
/* An object or an array member (borrowed; NULL when absent). */
gboolean stg_jf_object (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
                        gboolean required, JsonObject **out, GError **error);
gboolean stg_jf_array (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
                       gboolean required, JsonArray **out, GError **error);

/* The task section (jobfile_task.c): checks @task and @health (nullable)
 * against @ports (declared port names) and the job's key, and returns the
 * executor data as a JSON string. */
gchar *stg_jf_executor_data (const StgJfCtx *c, JsonObject *task, JsonObject *health,
                             GStrv ports, GError **error);

/* "aurora_task" of @top (jobfile_aurora.c): Aurora's job, inline or in a
 * file, checked against the job's @key and @cluster, into @task's
 * resources, scheduler fields and executorConfig (AuroraExecutor). The
 * keys it says itself ("task", "resources", ...) must be absent. */
gboolean stg_jf_aurora_task (const StgJfCtx *c, JsonObject *top, const ApiJobKey *key,
                             const gchar *cluster, ApiTaskConfig *task, GError **error);

/* The placement keys (jobfile_fleet.c): "container" and "constraints"
 * of @top into @task, in Aurora's forms. */
gboolean stg_jf_placement (const StgJfCtx *c, JsonObject *top, ApiTaskConfig *task, GError **error);

/* "sla_policy" of @top (jobfile_sla.c) into @task's slaPolicy, when
 * there. */
gboolean stg_jf_sla_policy (const StgJfCtx *c, JsonObject *top, ApiTaskConfig *task,
                            GError **error);

/* Gates (jobfile_gates.c): each object of @list (nullable) at @where as
 * a RolloutGate appended to @out; a job_healthy gate's cluster, when
 * given, must be @cluster (nullable: not checked). */
gboolean stg_jf_gates (const StgJfCtx *c, JsonArray *list, const gchar *where, const gchar *cluster,
                       GPtrArray *out, GError **error);

/* update_config.instance_gates of @uc (jobfile_gates.c): {"before":
 * [GATE...], "after": [GATE...]} into @settings' instanceGatesBefore and
 * instanceGatesAfter. */
gboolean stg_jf_instance_gates (const StgJfCtx *c, JsonObject *uc, const gchar *cluster,
                                ApiJobUpdateSettings *settings, GError **error);

/* Parses @text as a JSON object with Stagger's checks (numbers JSON can
 * hold exactly, no key given twice); NULL with @error. */
JsonNode *stg_jf_parse_object (const StgJfCtx *c, const gchar *text, gsize len, GError **error);

/* Plan variables (jobfile_vars.c). The variables of the plan file whose top level is @top: its
 * "variables" defaults, with @set (nullable: name -> value, from --set)
 * over them; an error names a --set variable the plan does not declare,
 * and a declared one left without a value. */
GHashTable *stg_jf_plan_variables (const StgJfCtx *c, JsonObject *top, GHashTable *set,
                                   GError **error);

/* @text of @file with every {{name}} of @vars (nullable) replaced by its
 * value, escaped as inside a JSON string; the executor's and instance
 * gates' templates left as they are; any other {{...}} an error naming
 * it. */
gchar *stg_jf_substitute (const gchar *file, const gchar *text, GHashTable *vars, GError **error);

/* The job file whose top level is @top (jobfile.c). */
StgJobFile *stg_jf_job (const StgJfCtx *c, JsonObject *top, const gchar *owner, GError **error);

G_END_DECLS
