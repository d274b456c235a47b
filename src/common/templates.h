/* templates.h: the {{NAME}} templates of a task's commands, environment
 * and instance gates (instance, ports[NAME], cluster, role, environment,
 * name, version), filled in for one instance, and the named ports a task
 * config asks for, which {{ports[NAME]}} may name. Pure; any thread.
 */
#pragma once

#include "common/thrift_glue.h"

G_BEGIN_DECLS

#define STG_TEMPLATE_ERROR (stg_template_error_quark ())
GQuark stg_template_error_quark (void);

typedef enum
{
  STG_TEMPLATE_ERROR_INVALID, /* an unknown or unclosed template, an unknown port */
} StgTemplateError;

typedef struct
{
  gint32 instance;
  const gchar *cluster;
  const gchar *role;
  const gchar *environment;
  const gchar *name;
  gint version;
  GHashTable *ports; /* name -> port (GINT_TO_POINTER) */
} StgTemplateVars;

/* Replaces {{instance}}, {{ports[NAME]}}, {{cluster}}, {{role}},
 * {{environment}}, {{name}}, {{version}} (and Aurora's {{mesos.instance}}
 * and {{thermos.ports[NAME]}}). With @vars NULL, only checks names (and
 * port names against @ports). */
gchar *stg_template_expand (const gchar *text, const StgTemplateVars *vars,
                            const gchar *const *ports, GError **error);

/* @config's named ports, in name order (NULL-terminated, owned). */
gchar **stg_task_port_names (const ApiTaskConfig *config);

G_END_DECLS
