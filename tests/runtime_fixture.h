/* runtime_fixture.h: what the local runtime's Check suites share: a store
 * in a temporary directory, a real clock, a local runtime over them, and
 * helpers to make configs and jobs and wait on what the runtime reports.
 * Test processes only. */
#pragma once

#include <check.h>

#include "common/jobkey.h"
#include "runtime/local/local.h"
#include "testutil.h"

typedef struct
{
  gchar *dir;
  StgStore *store;
  StgClock *clock;
  StgRuntime *rt;
  guint notices;
  guint disk_interval_ms; /* make_runtime's disk interval; 0: the runtime's default */
} Fx;

extern Fx fx;

/* Check fixture: a fresh store and runtime (ports 30000-30999), and their end. */
void stg_rt_setup (void);
void stg_rt_teardown (void);
/* (Re)makes the fixture's runtime with ports @min-@max. */
void make_runtime (gint min, gint max);
/* ... on a host with @attributes (nullable; name -> value, referenced). */
void make_runtime_on (gint min, gint max, GHashTable *attributes);
/* The path of stagger-example-server. */
gchar *server (void);
/* A config of job www/prod/NAME with executor data @data and named ports
 * (space-separated, may be ""). */
ApiTaskConfig *config (const gchar *name, const gchar *data, const gchar *ports, gboolean service);
/* Stores @t and a job of @n instances running it; returns the job id. */
gint64 make_job (ApiTaskConfig *t, gint32 n, gint64 *config_id);
/* Stores another config; returns its id. */
gint64 add_config (ApiTaskConfig *t);
/* Stores and applies config @config_id for instance @i of @job. */
void apply (gint64 job, gint32 i, gint64 config_id);
/* Waits @ms at most for instance @i to reach @phase (@config 0: any) with
 * at least @failures failures; fails the test otherwise. */
void wait_for (gint64 job, gint32 i, StgTaskPhase phase, gint64 config, guint32 failures, guint ms);
StgTaskObservation observe (gint64 job, gint32 i);
/* The task events of an instance, as one string of "STATUS: message" lines. */
gchar *events (gint64 job, gint32 i);
gint pid_of (gint64 job, gint32 i);
/* A server config: HTTP-checked, quick checks. @extra: more argv, JSON. */
gchar *server_data (const gchar *extra_argv, const gchar *extra);
/* Runs the main loop for @ms (things must keep happening meanwhile). */
void spin (guint ms);
