/* errors.c: the engine's error domain, how errors of the layers below
 * (store, runtime) are told in it, and the one way a transition a table
 * forbids is reported.
 *
 * The bottom of the engine's files: calls no other engine file. Pure
 * functions; any thread.
 */
#include "config.h"

#include "engine/engine_private.h"

G_DEFINE_QUARK (stg-engine-error-quark, stg_engine_error)

void
stg_engine_wrap_error (GError **error)
{
  if (error == NULL || *error == NULL || (*error)->domain == STG_ENGINE_ERROR)
    return;
  if ((*error)->domain == STG_STORE_ERROR && (*error)->code == STG_STORE_ERROR_EXISTS)
    (*error)->code = STG_ENGINE_ERROR_INVALID;
  else if ((*error)->domain == STG_STORE_ERROR && (*error)->code == STG_STORE_ERROR_NOT_FOUND)
    (*error)->code = STG_ENGINE_ERROR_NOT_FOUND;
  else if ((*error)->domain == STG_RUNTIME_ERROR && (*error)->code == STG_RUNTIME_ERROR_INVALID)
    (*error)->code = STG_ENGINE_ERROR_INVALID;
  else if ((*error)->domain == STG_RUNTIME_ERROR && (*error)->code == STG_RUNTIME_ERROR_NOT_FOUND)
    (*error)->code = STG_ENGINE_ERROR_NOT_FOUND;
  else
    (*error)->code = STG_ENGINE_ERROR_FAILED;
  (*error)->domain = STG_ENGINE_ERROR;
}

gboolean
stg_engine_transition_ok (gboolean allowed, const gchar *what, const gchar *id, const gchar *from,
                          const gchar *to)
{
  if (allowed)
    return TRUE;
#ifdef STG_CHECK_INVARIANTS
  g_error ("engine: %s %s: %s -> %s is not a transition of its machine", what, id, from, to);
#else
  g_critical ("engine: %s %s: %s -> %s is not a transition of its machine (refused)", what, id,
              from, to);
#endif
  return FALSE;
}
