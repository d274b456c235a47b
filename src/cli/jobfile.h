/* jobfile.h: job configuration files: one job per JSON file.
 *
 * A job file (stagger-job(5)) names a job (cluster, role, environment,
 * name), its instance count and task, and how updates of it proceed. It
 * turns into what the API takes: a JobConfiguration (whose TaskConfig
 * carries executorConfig {name "stagger", data: JSON of the task's runtime
 * fields and health check}) and JobUpdateSettings (Aurora's fields, plus
 * Stagger's ids 100-105, batch gates among them). Unknown keys are errors
 * with the closest known key suggested; every error names the file, the JSON path and what was
 * expected. Pure data and parsing; any thread.
 */
#pragma once

#include "common/jobkey.h"
#include "common/ranges.h"
#include "common/thrift_glue.h"

G_BEGIN_DECLS

#define STG_JOB_FILE_ERROR (stg_job_file_error_quark ())
GQuark stg_job_file_error_quark (void);

typedef enum
{
  STG_JOB_FILE_ERROR_FAILED,
  STG_JOB_FILE_ERROR_READ,           /* the file cannot be read */
  STG_JOB_FILE_ERROR_SYNTAX,         /* not JSON */
  STG_JOB_FILE_ERROR_UNKNOWN_KEY,
  STG_JOB_FILE_ERROR_DUPLICATE_KEY,
  STG_JOB_FILE_ERROR_MISSING,        /* a required key is absent */
  STG_JOB_FILE_ERROR_TYPE,           /* a value of the wrong JSON type */
  STG_JOB_FILE_ERROR_VALUE,          /* the right type, a bad value */
  STG_JOB_FILE_ERROR_MISMATCH,       /* not the job the command line names */
} StgJobFileError;

/* Largest job file read, in bytes. */
#define STG_JOB_FILE_MAX_SIZE (1024 * 1024)

typedef struct
{
  gchar *file;                        /* the name errors use */
  gchar *cluster;
  ApiJobConfiguration *job;           /* key, owner, taskConfig, instanceCount */
  ApiJobUpdateSettings *settings;     /* from update_config; no instance list */
} StgJobFile;

void stg_job_file_free (StgJobFile *file);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgJobFile, stg_job_file_free)

/* Reads and checks the job file at @path. @owner (nullable: the role) is
 * the user recorded as the job's owner. */
StgJobFile *stg_job_file_load (const gchar *path, const gchar *owner, GError **error);

/* Like stg_job_file_load() on @text (@len bytes, or -1 for a C string);
 * @name is the file name used in errors. */
StgJobFile *stg_job_file_parse (const gchar *name, const gchar *text, gssize len,
                                const gchar *owner, GError **error);

/* "cluster/role/environment/name" */
gchar *stg_job_file_key_string (StgJobFile *file);

/* Fails with STG_JOB_FILE_ERROR_MISMATCH unless @path (from the command
 * line) names the job the file describes. */
gboolean stg_job_file_check_key (StgJobFile *file, const StgJobPath *path, GError **error);

/* The JobUpdateRequest that moves the job to this file's configuration,
 * only on @instances when given. */
ApiJobUpdateRequest *stg_job_file_update_request (StgJobFile *file, StgRanges *instances);

/* A rollout plan file (stagger-plan(5), jobfile_plan.c): stages, each a
 * job file by path or inline, with gates, and plan variables
 * (jobfile_vars.c). */
typedef struct
{
  gchar *file;    /* the name errors use */
  gchar *cluster; /* every stage's job is of it */
  ApiRolloutPlan *plan;
} StgPlanFile;

void stg_plan_file_free (StgPlanFile *file);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgPlanFile, stg_plan_file_free)

/* Reads and checks the plan file at @path; job files it names by path are
 * read relative to its folder. @owner as for stg_job_file_load(). @set
 * (nullable: name -> value, from --set) gives plan variables; the values
 * used are recorded in the plan's variables. */
StgPlanFile *stg_plan_file_load (const gchar *path, const gchar *owner, GHashTable *set,
                                 GError **error);

/* A sidecar set file (stagger-sidecar(5), jobfile_sidecar.c): the set's
 * name, selector, sidecar (its task as executor data) and update
 * settings. */
typedef struct
{
  gchar *file;    /* the name errors use */
  gchar *cluster; /* (nullable) the "cluster" it names */
  ApiSidecarSet *set;
} StgSidecarFile;

void stg_sidecar_file_free (StgSidecarFile *file);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgSidecarFile, stg_sidecar_file_free)

/* Reads and checks the sidecar set file at @path. */
StgSidecarFile *stg_sidecar_file_load (const gchar *path, GError **error);

/* Adds @ranges to @set, a set<Range> as the generated code holds it. */
void stg_job_file_add_ranges (GHashTable *set, StgRanges *ranges);

G_END_DECLS
