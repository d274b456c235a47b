/* task_private.h: what the files of the executor-data parser share
 * (task.c reads the job, task_read.c the Thermos task, ports.c the named
 * ports, read.c the table reads they all use). Not for use outside
 * src/thermos/task*.c, ports.c and read.c. Any thread.
 */
#pragma once

#include <json-glib/json-glib.h>

#include "common/error.h"
#include "common/json_fields.h"
#include "thermos/task.h"
#include "thermos/template.h"

G_BEGIN_DECLS

#define stg_thermos_bad(error, ...) \
  stg_fail (error, STG_THERMOS_ERROR, STG_THERMOS_ERROR_INVALID, __VA_ARGS__)
#define stg_thermos_refuse(error, ...) \
  stg_fail (error, STG_THERMOS_ERROR, STG_THERMOS_ERROR_UNSUPPORTED, __VA_ARGS__)

/* Reads @object at @path through @fields (json_fields.h), with its errors
 * in STG_THERMOS_ERROR. */
gboolean stg_thermos_read (JsonObject *object, const gchar *path, const StgField *fields,
                           gpointer dest, GError **error);

/* The array @array's element @i as an object (the error names @path[i]). */
JsonObject *stg_thermos_element_object (JsonArray *array, const gchar *path, guint i,
                                        GError **error);

/* Reads job->task from @task (the "task" member): processes, constraints
 * and their order, limits, resources; notes the ports the processes'
 * templates name in job->port_refs. */
gboolean stg_thermos_read_task (StgThermosJob *job, JsonObject *task, GError **error);

/* Called once the task and the announcer are read: job->ports and
 * job->port_refs become the ports to assign (after the announcer's
 * aliases), with the key that first needs each. */
gboolean stg_thermos_ports_settle (StgThermosJob *job, GError **error);

/* A StgThermosRefFunc (template.h) that notes, in @note->refs (port name
 * -> key path), each port a template at @note->where names. */
typedef struct
{
  GHashTable *refs;
  const gchar *where;
} StgThermosPortNote;

gboolean stg_thermos_note_port (StgThermosRefKind kind, const gchar *port, gpointer note,
                                GError **error);

G_END_DECLS
