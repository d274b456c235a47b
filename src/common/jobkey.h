/* jobkey.h: job keys: checking, formatting and parsing.
 *
 * A job is named role/environment/name; on the command line a cluster comes
 * first (cluster/role/environment/name) and an instance list may follow
 * (.../name/0-1,3). Each part matches [A-Za-z0-9._-]+ and is at most
 * STG_JOB_KEY_PART_MAX bytes. Any thread.
 */
#pragma once

#include "common/ranges.h"
#include "common/thrift_glue.h"

G_BEGIN_DECLS

#define STG_JOB_KEY_PART_MAX 200

#define STG_JOB_KEY_ERROR (stg_job_key_error_quark ())
GQuark stg_job_key_error_quark (void);
typedef enum { STG_JOB_KEY_ERROR_FAILED, STG_JOB_KEY_ERROR_INVALID } StgJobKeyError;

/* TRUE when @part is a valid key part: 1 to STG_JOB_KEY_PART_MAX letters,
 * digits, '.', '_' and '-', not starting with '.' ("." and ".." never). */
gboolean stg_job_key_part_valid (const gchar *part);

/* Checks every part of @key; the error names the field (@what, e.g.
 * "description.key") and what is wrong. */
gboolean stg_job_key_check (const ApiJobKey *key, const gchar *what, GError **error);

ApiJobKey *stg_job_key_new (const gchar *role, const gchar *environment, const gchar *name);

/* "role/environment/name" */
gchar *stg_job_key_to_string (const ApiJobKey *key);

gboolean stg_job_key_equal (const ApiJobKey *a, const ApiJobKey *b);

/* The id of run @run of instance @instance of @key, as getTasks shows it
 * and {{thermos.task_id}} is filled in: "role-environment-name-I-RUN". */
gchar *stg_job_key_task_id (const ApiJobKey *key, gint32 instance, gint64 run);

/* A parsed command-line key: cluster/role/environment/name[/instances]. */
typedef struct
{
  gchar *cluster;
  ApiJobKey *key;
  StgRanges *instances;   /* (nullable): all instances */
} StgJobPath;

void stg_job_path_free (StgJobPath *path);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgJobPath, stg_job_path_free)

/* Parses "cluster/role/env/name" and, when @allow_instances, an optional
 * "/0-1,3" after it. */
StgJobPath *stg_job_path_parse (const gchar *text, gboolean allow_instances, GError **error);

G_END_DECLS
