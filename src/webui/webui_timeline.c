/* webui_timeline.c: an update's timeline as JSON (engine/timeline.h).
 *
 * GET /ui/api/timeline?role=&environment=&name=&id= answers the update's
 * begin and end (now while it runs), its watch time and physical limit,
 * its holds (pauses, pulses awaited), its batches (begin, end, works,
 * slowest instance, limit, the gap before it and what held it) and each
 * instance's works with their phases, all times in ms since the epoch.
 * `stagger update timeline` draws it in a terminal. Main-loop thread only.
 */
#include "config.h"

#include "common/enums.h"
#include "engine/timeline.h"
#include "webui/webui_private.h"

/* "name": @value, or null when it is negative (not known). */
static void
member_known (JsonBuilder *b, const gchar *name, gint64 value)
{
  json_builder_set_member_name (b, name);
  if (value >= 0)
    json_builder_add_int_value (b, value);
  else
    json_builder_add_null_value (b);
}

static void
add_span (JsonBuilder *b, const StgTimelineSpan *s)
{
  json_builder_begin_object (b);
  member_string (b, "phase", stg_timeline_phase_name (s->phase));
  member_int (b, "from_ms", s->from_ms);
  member_int (b, "to_ms", s->to_ms);
  json_builder_end_object (b);
}

static void
add_batch (JsonBuilder *b, const StgTimelineBatch *x)
{
  json_builder_begin_object (b);
  member_bool (b, "back", x->back);
  member_known (b, "batch", x->batch);
  member_int (b, "from_ms", x->from_ms);
  member_int (b, "to_ms", x->to_ms);
  member_int (b, "instances", x->works);
  member_known (b, "slowest", x->slowest);
  member_known (b, "slowest_ms", x->slowest_ms);
  member_int (b, "limit_ms", x->limit_ms);
  member_int (b, "held_ms", x->held_ms);
  member_int (b, "gap_ms", x->gap_ms);
  member_string (b, "gap_why", x->gap_why);
  member_string (b, "held_by", x->held_by);
  json_builder_end_object (b);
}

static void
add_work (JsonBuilder *b, const StgTimelineWork *w)
{
  json_builder_begin_object (b);
  member_int (b, "instance", w->instance);
  member_bool (b, "back", w->back);
  member_known (b, "batch", w->batch);
  member_int (b, "from_ms", w->from_ms);
  member_int (b, "to_ms", w->to_ms);
  member_string (b, "outcome", stg_timeline_outcome (w));
  member_known (b, "healthy_ms", w->healthy_ms);
  json_builder_set_member_name (b, "phases");
  json_builder_begin_array (b);
  for (guint i = 0; i < w->spans->len; i++)
    add_span (b, &g_array_index (w->spans, StgTimelineSpan, i));
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static guint
read_timeline (StgWebUi *ui, StgHttpRequest *request, JsonBuilder *b, GError **error)
{
  guint status;
  g_autoptr (StgUpdateRow) row = stg_webui_query_update (ui, request, &status, error);

  if (row == NULL)
    return status;
  g_autoptr (StgTimeline) t = stg_engine_update_timeline (ui->ctx.engine, row->uid, error);
  if (t == NULL)
    return stg_webui_engine_status (*error);

  json_builder_begin_object (b);
  stg_webui_add_fields (b, row->job, "role environment name");
  member_string (b, "id", row->uid);
  member_string (b, "status", stg_update_status_name (row->status));
  member_int (b, "from_ms", t->from_ms);
  member_int (b, "to_ms", t->to_ms);
  member_bool (b, "active", t->active);
  member_int (b, "watch_ms", t->watch_ms);
  member_int (b, "limit_ms", t->limit_ms);
  member_int (b, "predicted_ms", t->predicted_ms);
  json_builder_set_member_name (b, "holds");
  json_builder_begin_array (b);
  for (guint i = 0; i < t->holds->len; i++)
    add_span (b, &g_array_index (t->holds, StgTimelineSpan, i));
  json_builder_end_array (b);
  json_builder_set_member_name (b, "batches");
  json_builder_begin_array (b);
  for (guint i = 0; i < t->batches->len; i++)
    add_batch (b, &g_array_index (t->batches, StgTimelineBatch, i));
  json_builder_end_array (b);
  json_builder_set_member_name (b, "instances");
  json_builder_begin_array (b);
  for (guint i = 0; i < t->works->len; i++)
    add_work (b, &g_array_index (t->works, StgTimelineWork, i));
  json_builder_end_array (b);
  json_builder_end_object (b);
  return 200;
}

const StgWebUiRoute stg_webui_timeline_routes[] = {
  { "/ui/api/timeline", .read = read_timeline },
  { NULL },
};
