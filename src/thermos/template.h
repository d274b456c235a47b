/* template.h: the templates Aurora leaves for its executor to fill in.
 *
 * Aurora's client binds every Pystachio name it knows before it sends a
 * job; what is left in the executor data as {{...}} is what only the
 * executor knows: {{mesos.instance}}, {{mesos.hostname}} (anywhere in the
 * job), {{thermos.task_id}}, {{thermos.user}} and {{thermos.ports[NAME]}}
 * (in the task's processes and the shell health check). A template is
 * Pystachio's: "{{" then one or more characters other than braces then
 * "}}"; "{{&x}}" stands for the text "{{x}}". Anything else with braces is
 * plain text. Part of libstg_thermos; pure functions, any thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  STG_THERMOS_REF_INSTANCE, /* {{mesos.instance}} */
  STG_THERMOS_REF_HOSTNAME, /* {{mesos.hostname}} */
  STG_THERMOS_REF_TASK_ID,  /* {{thermos.task_id}} */
  STG_THERMOS_REF_USER,     /* {{thermos.user}} */
  STG_THERMOS_REF_PORT,     /* {{thermos.ports[NAME]}} */
} StgThermosRefKind;

/* Which templates a text may hold. */
typedef enum
{
  STG_THERMOS_SCOPE_MESOS = 1 << 0,   /* mesos.instance, mesos.hostname */
  STG_THERMOS_SCOPE_THERMOS = 1 << 1, /* thermos.task_id, thermos.user, thermos.ports[...] */
  STG_THERMOS_SCOPE_ALL = 3,
} StgThermosScope;

/* What the templates stand for when one instance runs. */
typedef struct
{
  gint instance;
  const gchar *hostname;
  const gchar *task_id;
  const gchar *user;
  GHashTable *ports; /* port name -> GINT_TO_POINTER (number), aliases included */
} StgThermosVars;

/* Called for each template of a text; @port is the port's name for
 * STG_THERMOS_REF_PORT, else NULL. */
typedef gboolean (*StgThermosRefFunc) (StgThermosRefKind kind, const gchar *port, gpointer data,
                                       GError **error);

/* Checks every template of @text (found at key path @where, for messages)
 * against @scopes and calls @func (nullable) for each. */
gboolean stg_thermos_template_scan (const gchar *text, const gchar *where, guint scopes,
                                    StgThermosRefFunc func, gpointer data, GError **error);

/* @text with its templates replaced by @vars; an unknown template, or a
 * port @vars has no number for, is an error naming @where. */
gchar *stg_thermos_template_expand (const gchar *text, const gchar *where, guint scopes,
                                    const StgThermosVars *vars, GError **error);

G_END_DECLS
