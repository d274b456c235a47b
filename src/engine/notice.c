/* notice.c: the state changes the engine tells its notifier
 * (runtime/notify.h): queued inside a step as they are recorded, handed
 * over in order inside the step's transaction just before its commit,
 * once everything else of the step is written (step.c), so the notifier
 * can keep them in the store with the change; then the notifier hears
 * whether the commit happened, and only a committed change is sent.
 * Notices of a step that failed before its commit never reach it. Calls
 * reasons.c only. Main-loop thread only.
 */
#include "config.h"

#include "common/enums.h"
#include "engine/engine_private.h"
#include "engine/notice_private.h"

typedef struct
{
  StgNotice n; /* its strings and job are owned */
} Notice;

static void
notice_free (gpointer data)
{
  Notice *x = data;

  g_free ((gchar *) x->n.event);
  g_free ((gchar *) x->n.status);
  g_free ((gchar *) x->n.previous);
  g_free ((gchar *) x->n.reason);
  g_free ((gchar *) x->n.message);
  g_free ((gchar *) x->n.user);
  if (x->n.job != NULL)
    g_object_unref ((gpointer) x->n.job);
  g_free ((gchar *) x->n.update_id);
  g_free ((gchar *) x->n.plan_id);
  g_free ((gchar *) x->n.plan_name);
  g_free ((gchar *) x->n.stage);
  g_free (x);
}

void
stg_engine_notice (StgEngine *e, const StgNotice *n)
{
  if (e->notifier == NULL)
    return;
  if (e->step_depth == 0)
    {
      stg_notifier_post (e->notifier, n);
      stg_notifier_end (e->notifier, TRUE);
      return;
    }
  Notice *x = g_new0 (Notice, 1);
  x->n = (StgNotice){
    .event = g_strdup (n->event),
    .status = g_strdup (n->status),
    .previous = g_strdup (n->previous),
    .reason = g_strdup (n->reason),
    .message = g_strdup (n->message),
    .user = g_strdup (n->user),
    .timestamp_ms = n->timestamp_ms,
    .job = n->job != NULL ? stg_thrift_copy ((gpointer) n->job) : NULL,
    .update_id = g_strdup (n->update_id),
    .plan_id = g_strdup (n->plan_id),
    .plan_name = g_strdup (n->plan_name),
    .stage = g_strdup (n->stage),
  };
  if (e->notices == NULL)
    e->notices = g_ptr_array_new_with_free_func (notice_free);
  g_ptr_array_add (e->notices, x);
}

void
stg_engine_notice_update (StgEngine *e, const gchar *uid, const ApiJobKey *job, gint status,
                          gint previous, const gchar *user, const gchar *message)
{
  StgNotice n = {
    .event = "update",
    .status = stg_update_status_name (status),
    .previous = previous >= 0 ? stg_update_status_name (previous) : NULL,
    .reason = stg_update_reason (status, previous, user != NULL && user[0] != '\0', message),
    .message = message,
    .user = user,
    .timestamp_ms = stg_clock_now_ms (e->clock),
    .job = job,
    .update_id = uid,
  };
  stg_engine_notice (e, &n);
}

void
stg_engine_notices_keep (StgEngine *e)
{
  g_autoptr (GPtrArray) notices = g_steal_pointer (&e->notices);

  for (guint i = 0; notices != NULL && i < notices->len; i++)
    stg_notifier_post (e->notifier, &((Notice *) notices->pdata[i])->n);
}

void
stg_engine_notices_end (StgEngine *e, gboolean committed)
{
  g_clear_pointer (&e->notices, g_ptr_array_unref);
  if (e->notifier != NULL)
    stg_notifier_end (e->notifier, committed);
}
