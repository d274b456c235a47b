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
  STG_TEMPLATE_ERROR_INVALID,  /* an unknown template, an unknown port */
  STG_TEMPLATE_ERROR_UNCLOSED, /* a "{{" with no "}}" after it */
} StgTemplateError;

/* The names of the templates that are not ports, NULL-terminated:
 * instance, mesos.instance, cluster, role, environment, name, version. */
extern const gchar *const stg_template_names[];

/* The port a template names ("ports[http]" and Aurora's
 * "thermos.ports[http]": "http"), owned; NULL when it names none. */
gchar *stg_template_port (const gchar *name);

/* Called for each {{...}} of a text with its name (trimmed) and its whole
 * text ("{{ name }}", @len bytes); it may append to @out. */
typedef gboolean (*StgTemplateFunc) (const gchar *name, const gchar *raw, gsize len, GString *out,
                                     gpointer data, GError **error);

/* The one scanner of {{...}} templates: appends the text between them to
 * @out (nullable) and calls @each for each. A "{{" with no "}}" fails
 * with STG_TEMPLATE_ERROR_UNCLOSED, after the rest of @text (from that
 * "{{") was appended to @out. */
gboolean stg_template_each (const gchar *text, GString *out, StgTemplateFunc each, gpointer data,
                            GError **error);

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
