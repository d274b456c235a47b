/* engine_timeline_test.c: Check suite for an update's timeline
 * (engine/timeline.c): works split into phases by their task events, a
 * rollback taking over a run still starting, batches with their physical
 * limits, what held each and the gap before it, pauses as holds; and, on
 * the engine fixture, the batch each instance event records
 * (schema/021_batches.sql) making the batches of a real update. */
#include "config.h"

#include <check.h>
#include <string.h>

#include "engine/timeline.h"
#include "engine_fixture.h"

#define A(x) API_JOB_UPDATE_ACTION_INSTANCE_##x
#define S(x) API_SCHEDULE_STATUS_##x

static void
setup (void)
{
  fx_setup ();
}

static void
teardown (void)
{
  fx_teardown ();
}

/* The engine over a runtime whose phases are TaskEvents in the store, as
 * a real runtime's: what a timeline's works are split by. */
static void
setup_recorded (void)
{
  scripted_runtime_set_recording (TRUE);
  fx_setup ();
}

static void
teardown_recorded (void)
{
  fx_teardown ();
  scripted_runtime_set_recording (FALSE);
}

static void
add (GArray *events, gint32 instance, gint64 ts, gint code, gint batch)
{
  StgTimelineEvent ev = { instance, ts, code, batch };
  g_array_append_val (events, ev);
}

static void
add_status (GPtrArray *events, gint64 ts, gint status)
{
  g_ptr_array_add (events, g_object_new (API_TYPE_JOB_UPDATE_EVENT, "status", status, "timestampMs",
                                         ts, NULL));
}

/* Work @w's phases as "name@from-to ..." */
static gchar *
spans_text (const StgTimelineWork *w)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < w->spans->len; i++)
    {
      const StgTimelineSpan *x = &g_array_index (w->spans, StgTimelineSpan, i);
      g_string_append_printf (s, "%s%s@%" G_GINT64_FORMAT "-%" G_GINT64_FORMAT, i ? " " : "",
                              stg_timeline_phase_name (x->phase), x->from_ms, x->to_ms);
    }
  return g_string_free (s, FALSE);
}

static const StgTimelineWork *
work (const StgTimeline *t, guint i)
{
  ck_assert_uint_lt (i, t->works->len);
  return &g_array_index (t->works, StgTimelineWork, i);
}

static const StgTimelineBatch *
batch (const StgTimeline *t, guint i)
{
  ck_assert_uint_lt (i, t->batches->len);
  return &g_array_index (t->batches, StgTimelineBatch, i);
}

/* Instances 0 and 1 in batch 0; 2 in batch 1, which waits for a pause,
 * fails, and is rolled back, its rollback taking over a run that is still
 * starting and replacing it. */
START_TEST (phases_batches_limits_and_holds)
{
  g_autoptr (GArray) ievents = g_array_new (FALSE, FALSE, sizeof (StgTimelineEvent));
  g_autoptr (GArray) tevents = g_array_new (FALSE, FALSE, sizeof (StgTimelineEvent));
  g_autoptr (GPtrArray) uevents = g_ptr_array_new_with_free_func (g_object_unref);

  add (ievents, 0, 0, A (UPDATING), 0);
  add (ievents, 1, 0, A (UPDATING), 0);
  add (ievents, 0, 300, A (UPDATING), 0); /* an instance gate's word: the same work */
  add (ievents, 0, 1500, A (UPDATED), 0);
  add (ievents, 1, 1700, A (UPDATED), 0);
  add (ievents, 2, 2000, A (UPDATING), 1);
  add (ievents, 2, 3000, A (UPDATE_FAILED), 1);
  add (ievents, 2, 3000, A (ROLLING_BACK), 0);
  add (ievents, 2, 4500, A (ROLLED_BACK), 0);
  add (tevents, 2, -500, S (RUNNING), -1); /* before the update: not carried over */
  add (tevents, 0, 10, S (KILLING), -1);
  add (tevents, 1, 10, S (KILLING), -1);
  add (tevents, 0, 50, S (KILLED), -1);
  add (tevents, 0, 100, S (STARTING), -1);
  add (tevents, 1, 120, S (STARTING), -1);
  add (tevents, 0, 400, S (RUNNING), -1);
  add (tevents, 1, 700, S (RUNNING), -1);
  add (tevents, 2, 2100, S (STARTING), -1);
  add (tevents, 2, 2500, S (FAILED), -1);
  add (tevents, 2, 2600, S (STARTING), -1);
  add (tevents, 2, 3010, S (KILLING), -1);
  add (tevents, 2, 3050, S (STARTING), -1);
  add (tevents, 2, 3200, S (RUNNING), -1);
  add_status (uevents, 0, API_JOB_UPDATE_STATUS_ROLLING_FORWARD);
  add_status (uevents, 1800, API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED);
  add_status (uevents, 1950, API_JOB_UPDATE_STATUS_ROLLING_FORWARD);
  add_status (uevents, 3000, API_JOB_UPDATE_STATUS_ROLLING_BACK);
  add_status (uevents, 4500, API_JOB_UPDATE_STATUS_ROLLED_BACK);
  StgTimelineInput in = { ievents, tevents, uevents, 0, 4500, FALSE, 1000 };
  g_autoptr (StgTimeline) t = stg_timeline_build (&in);

  ck_assert_uint_eq (t->works->len, 4);
  g_autofree gchar *w0 = spans_text (work (t, 0));
  ck_assert_str_eq (w0, "waiting@0-10 stopping@10-50 stopped@50-100 starting@100-400 "
                        "healthy@400-1500");
  ck_assert_int_eq (work (t, 0)->healthy_ms, 300);
  ck_assert_str_eq (stg_timeline_outcome (work (t, 0)), "updated");
  ck_assert_int_eq (work (t, 1)->healthy_ms, 580);
  /* 2's forward work: a failed start, then another that never got healthy. */
  g_autofree gchar *w2 = spans_text (work (t, 2));
  ck_assert_str_eq (w2, "waiting@2000-2100 starting@2100-2500 failed@2500-2600 "
                        "starting@2600-3000");
  ck_assert (!work (t, 2)->back);
  ck_assert_int_eq (work (t, 2)->healthy_ms, -1);
  ck_assert_str_eq (stg_timeline_outcome (work (t, 2)), "update_failed");
  /* Its rollback takes over the start under way, replaces it, and times
   * the start that became healthy. */
  g_autofree gchar *w3 = spans_text (work (t, 3));
  ck_assert_str_eq (w3, "starting@3000-3010 stopping@3010-3050 starting@3050-3200 "
                        "healthy@3200-4500");
  ck_assert (work (t, 3)->back);
  ck_assert_int_eq (work (t, 3)->healthy_ms, 150);
  ck_assert_str_eq (stg_timeline_outcome (work (t, 3)), "rolled_back");

  ck_assert_uint_eq (t->batches->len, 3);
  const StgTimelineBatch *b0 = batch (t, 0), *b1 = batch (t, 1), *b2 = batch (t, 2);
  ck_assert (!b0->back && b0->batch == 0 && b0->works == 2);
  ck_assert_int_eq (b0->from_ms, 0);
  ck_assert_int_eq (b0->to_ms, 1700);
  ck_assert_int_eq (b0->slowest, 1);
  ck_assert_int_eq (b0->slowest_ms, 580);
  ck_assert_int_eq (b0->limit_ms, 1580);
  ck_assert_str_eq (b0->held_by, "instance 1 (healthy 1.0 s)");
  ck_assert_ptr_null (b0->gap_why);
  /* Batch 1 began after a pause: the gap says so. */
  ck_assert (!b1->back && b1->batch == 1 && b1->works == 1);
  ck_assert_int_eq (b1->gap_ms, 300);
  ck_assert_str_eq (b1->gap_why, "a pause");
  ck_assert_int_eq (b1->slowest, -1);
  ck_assert_int_eq (b1->limit_ms, 0);
  ck_assert (b2->back && b2->batch == 0);
  ck_assert_int_eq (b2->limit_ms, 1150);
  ck_assert_int_eq (t->limit_ms, 1580 + 1150);

  ck_assert_uint_eq (t->holds->len, 1);
  const StgTimelineSpan *h = &g_array_index (t->holds, StgTimelineSpan, 0);
  ck_assert_int_eq (h->phase, STG_TIMELINE_PAUSED);
  ck_assert_int_eq (h->from_ms, 1800);
  ck_assert_int_eq (h->to_ms, 1950);
}
END_TEST

/* A work still open when the update ended was cut short; while the update
 * runs it is under way, up to now. A pause before a batch's last work
 * began is named before that work. */
START_TEST (open_works_and_pauses_inside_a_batch)
{
  g_autoptr (GArray) ievents = g_array_new (FALSE, FALSE, sizeof (StgTimelineEvent));
  g_autoptr (GPtrArray) uevents = g_ptr_array_new_with_free_func (g_object_unref);

  add (ievents, 0, 0, A (UPDATING), 0);
  add (ievents, 0, 100, A (UPDATED), 0);
  add (ievents, 1, 900, A (UPDATING), 0);
  add_status (uevents, 0, API_JOB_UPDATE_STATUS_ROLLING_FORWARD);
  add_status (uevents, 100, API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED);
  add_status (uevents, 800, API_JOB_UPDATE_STATUS_ROLLING_FORWARD);
  StgTimelineInput running = { ievents, NULL, uevents, 0, 1000, TRUE, 0 };
  g_autoptr (StgTimeline) t = stg_timeline_build (&running);

  ck_assert_ptr_null (stg_timeline_outcome (work (t, 1)));
  ck_assert_int_eq (work (t, 1)->to_ms, 1000);
  g_autofree gchar *w1 = spans_text (work (t, 1));
  ck_assert_str_eq (w1, "waiting@900-1000");
  ck_assert_str_eq (batch (t, 0)->held_by, "a pause (0.7 s), then instance 1 (waiting 0.1 s)");

  StgTimelineInput ended = { ievents, NULL, uevents, 0, 1200, FALSE, 0 };
  g_autoptr (StgTimeline) e = stg_timeline_build (&ended);
  ck_assert_str_eq (stg_timeline_outcome (work (e, 1)), "cut_short");
  ck_assert_int_eq (work (e, 1)->to_ms, 1200);
}
END_TEST

/* Starts @r, runs it to ROLLED_FORWARD and returns its timeline; its key
 * in @key. */
static StgTimeline *
roll_forward (ApiJobUpdateRequest *r, ApiJobUpdateKey **key)
{
  g_autoptr (GError) error = NULL;

  *key = fx_start (r);
  fx_run (20000);
  ck_assert_int_eq (fx_status (*key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  StgTimeline *t = stg_engine_update_timeline (fx.engine, (*key)->id, &error);
  ck_assert_msg (t != NULL, "%s", error ? error->message : "");
  return t;
}

/* An update of 4 instances in batches of 2 on the engine: its instance
 * events carry their batches, which the timeline groups. */
START_TEST (the_engine_records_each_work_s_batch)
{
  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  g_object_set (r->settings, "updateGroupSize", 2, "waitForBatchCompletion", TRUE, NULL);
  g_autoptr (ApiJobUpdateKey) key = NULL;
  g_autoptr (StgTimeline) t = roll_forward (r, &key);
  ck_assert (!t->active);
  ck_assert_int_eq (t->watch_ms, 1000);
  ck_assert_uint_eq (t->works->len, 4);
  ck_assert_uint_eq (t->batches->len, 2);
  for (guint i = 0; i < 4; i++)
    {
      ck_assert_int_eq (work (t, i)->instance, (gint32) i);
      ck_assert_int_eq (work (t, i)->batch, (gint) i / 2);
      ck_assert_str_eq (stg_timeline_outcome (work (t, i)), "updated");
    }
  ck_assert_int_eq (batch (t, 0)->batch, 0);
  ck_assert_int_eq (batch (t, 1)->batch, 1);
  ck_assert_int_ge (batch (t, 1)->from_ms, batch (t, 0)->to_ms);

  g_autoptr (GError) missing = NULL;
  ck_assert_ptr_null (stg_engine_update_timeline (fx.engine, "no-such-update", &missing));
  ck_assert (g_error_matches (missing, STG_ENGINE_ERROR, STG_ENGINE_ERROR_NOT_FOUND));
}
END_TEST

/* The instances of each of @r's batches as "0 1|2 3". */
static gchar *
batches_of (const ApiUpdateRehearsal *r)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < r->batches->len; i++)
    {
      const ApiRehearsalBatch *b = r->batches->pdata[i];
      if (i > 0)
        g_string_append_c (out, '|');
      for (guint j = 0; j < b->instances->len; j++)
        g_string_append_printf (out, "%s%d", j > 0 ? " " : "",
                                g_array_index (b->instances, gint32, j));
    }
  return g_string_free (out, FALSE);
}

static ApiUpdateRehearsal *
rehearse (ApiJobUpdateRequest *r)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiGetJobUpdateDiffResult) d = stg_engine_diff (fx.engine, r, TRUE, &error);

  ck_assert_msg (d != NULL, "%s", error ? error->message : "");
  ck_assert (d->__isset_rehearsal && d->rehearsal != NULL);
  return g_object_ref (d->rehearsal);
}

/* Before any update the rehearsal has batches and limits of the watch
 * time only, and no prediction; after one, the times it measured predict
 * the next update's batches and duration, which the update then takes
 * (the scripted runtime is as slow each time), and after that one its
 * times. Nothing is started by a rehearsal. */
START_TEST (a_rehearsal_predicts_from_the_last_update)
{
  fx_create_job (4);
  for (gint32 i = 0; i < 4; i++)
    scripted_runtime_delay (fx.rt, i, 300 + 100 * i); /* instance 3 the slowest: 600 ms */
  g_autoptr (ApiJobUpdateRequest) r2 = fx_request ("v2", 4);
  fx_set_strategy_batch (r2, 2, FALSE);
  g_autoptr (ApiUpdateRehearsal) blind = rehearse (r2);
  g_autofree gchar *blind_batches = batches_of (blind);
  ck_assert_str_eq (blind_batches, "0 1|2 3");
  ck_assert_str_eq (blind->strategy, "batch");
  ck_assert_int_eq (blind->predictedMs, -1);
  ck_assert_int_eq (blind->limitMs, 2 * 1000); /* the watch time per batch */
  ck_assert_ptr_nonnull (strstr (blind->basis, "no earlier update"));
  g_autofree gchar *log = fx_take_log ();
  ck_assert_str_eq (log, ""); /* the runtime was asked nothing */

  g_autoptr (ApiJobUpdateKey) k2 = NULL;
  g_autoptr (StgTimeline) t2 = roll_forward (r2, &k2);

  g_autoptr (ApiJobUpdateRequest) r3 = fx_request ("v3", 4);
  fx_set_strategy_batch (r3, 2, FALSE);
  g_autoptr (ApiUpdateRehearsal) seen = rehearse (r3);
  ck_assert_str_eq (seen->measuredIn, k2->id);
  ck_assert_int_eq (seen->batches->len, 2);
  const ApiRehearsalBatch *b1 = seen->batches->pdata[1];
  ck_assert_int_eq (b1->atOnce, 2);
  ck_assert_int_eq (b1->limitMs, 600 + 1000); /* instance 3's start to healthy, then the watch */
  ck_assert_int_eq (seen->limitMs, 400 + 1000 + 600 + 1000);
  ck_assert_int_ge (seen->predictedMs, seen->limitMs);
  /* minInService 3 of 4: one down at a time, so a batch takes its two
   * instances one after the other (1.3 s + 1.4 s, not the slower 1.4 s). */
  g_autoptr (ApiJobUpdateRequest) held_r = fx_request ("v3", 4);
  fx_set_strategy_batch (held_r, 2, FALSE);
  g_object_set (held_r->settings, "minInService", 3, NULL);
  g_autoptr (ApiUpdateRehearsal) held = rehearse (held_r);
  const ApiRehearsalBatch *h0 = held->batches->pdata[0], *s0 = seen->batches->pdata[0];
  ck_assert_int_eq (h0->atOnce, 1);
  ck_assert_int_eq (h0->limitMs, s0->limitMs); /* the limit is its slowest instance's */
  ck_assert_int_eq (h0->predictedMs - s0->predictedMs, 1300);

  g_autoptr (ApiJobUpdateKey) k3 = NULL;
  g_autoptr (StgTimeline) t = roll_forward (r3, &k3);
  gint64 took = t->to_ms - t->from_ms;
  ck_assert_int_eq (t->predicted_ms, seen->predictedMs); /* kept from its start */
  ck_assert_int_eq (t2->predicted_ms, -1);               /* nothing was measured before it */
  ck_assert_msg (ABS (took - seen->predictedMs) * 20 <= took,
                 "predicted %" G_GINT64_FORMAT " ms, took %" G_GINT64_FORMAT " ms",
                 seen->predictedMs, took);
  /* The next rehearsal measures the update that finished since, not the
   * one the engine kept from before. */
  g_autoptr (ApiJobUpdateRequest) r4 = fx_request ("v4", 4);
  fx_set_strategy_batch (r4, 2, FALSE);
  g_autoptr (ApiUpdateRehearsal) next = rehearse (r4);
  ck_assert_str_eq (next->measuredIn, k3->id);
}
END_TEST

/* Batches grow by the growth factor up to the cap; minInService holds
 * how many go down at once and says so; a queue's groups overlap, so
 * only the whole has a time. */
START_TEST (a_rehearsal_grows_caps_and_queues)
{
  fx_create_job (8);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 8);
  fx_set_strategy_batch (r, 1, FALSE);
  g_object_set (r->settings, "growthFactor", 2.0, "maxBatchSize", 3, NULL);
  g_autoptr (ApiUpdateRehearsal) grown = rehearse (r);
  g_autofree gchar *sizes = batches_of (grown);
  ck_assert_str_eq (sizes, "0|1 2|3 4 5|6 7");

  g_object_set (r->settings, "minInService", 6, NULL);
  g_autoptr (ApiUpdateRehearsal) held = rehearse (r);
  const ApiRehearsalBatch *b2 = held->batches->pdata[2];
  ck_assert_int_eq (b2->atOnce, 2);
  gboolean told = FALSE;
  for (guint i = 0; i < held->notes->len; i++)
    told |= strstr (held->notes->pdata[i], "minInService 6") != NULL;
  ck_assert (told);

  g_autoptr (ApiJobUpdateRequest) q = fx_request ("v2", 8);
  fx_set_strategy_queue (q, 3);
  g_autoptr (ApiUpdateRehearsal) queued = rehearse (q);
  g_autofree gchar *groups = batches_of (queued);
  ck_assert_str_eq (queued->strategy, "queue");
  ck_assert_str_eq (groups, "0 1 2 3 4|5 6 7"); /* a group: what starts before its size finished */
  ck_assert_int_eq (((ApiRehearsalBatch *) queued->batches->pdata[0])->predictedMs, -1);
}
END_TEST

static Suite *
suite (void)
{
  Suite *s = suite_create ("engine_timeline");
  TCase *tc = tcase_create ("timeline");

  tcase_add_test (tc, phases_batches_limits_and_holds);
  tcase_add_test (tc, open_works_and_pauses_inside_a_batch);
  suite_add_tcase (s, tc);
  tc = tcase_create ("engine");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, the_engine_records_each_work_s_batch);
  tcase_add_test (tc, a_rehearsal_grows_caps_and_queues);
  suite_add_tcase (s, tc);
  tc = tcase_create ("recorded");
  tcase_add_checked_fixture (tc, setup_recorded, teardown_recorded);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, a_rehearsal_predicts_from_the_last_update);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
