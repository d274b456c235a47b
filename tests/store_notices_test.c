/* store_notices_test.c: the store's webhook notices (src/store/notices.c):
 * numbers that only grow, also past a caller's own and across a reopening,
 * and given again only when rolled back; rows by webhook, oldest first,
 * each webhook's oldest given up past the bound; deletion. Run by
 * store_test on SQLite and on PostgreSQL. */
#include "config.h"

#include "store/notices.h"
#include "store_test.h"
#include "testutil.h"

static gint64
next_seq (StgStore *store, gint64 after)
{
  g_autoptr (GError) error = NULL;
  gint64 seq = 0;

  ck_assert_msg (stg_store_next_notice_seq (store, after, &seq, &error), "%s",
                 error ? error->message : "");
  return seq;
}

static void
add (StgStore *store, const gchar *webhook, gint64 seq, gint keep)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *id = g_uuid_string_random ();
  g_autofree gchar *body = g_strdup_printf ("{\"seq\":%" G_GINT64_FORMAT "}", seq);
  StgNoticeRow row = { .webhook = (gchar *) webhook,
                       .seq = seq,
                       .delivery_id = id,
                       .event = "update.ROLLED_FORWARD",
                       .body = body };

  ck_assert_msg (stg_store_add_notice (store, &row, keep, &error), "%s",
                 error ? error->message : "");
}

/* "WEBHOOK:SEQ ..." of every row, checking each body. */
static gchar *
rows (StgStore *store)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) all = stg_store_list_notices (store, &error);
  g_autoptr (GString) s = g_string_new (NULL);

  ck_assert_msg (all != NULL, "%s", error ? error->message : "");
  for (guint i = 0; i < all->len; i++)
    {
      StgNoticeRow *r = all->pdata[i];
      g_autofree gchar *body = g_strdup_printf ("{\"seq\":%" G_GINT64_FORMAT "}", r->seq);
      ck_assert_str_eq (r->body, body);
      ck_assert_str_eq (r->event, "update.ROLLED_FORWARD");
      ck_assert (g_uuid_string_is_valid (r->delivery_id));
      g_string_append_printf (s, "%s%s:%" G_GINT64_FORMAT, i ? " " : "", r->webhook, r->seq);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

START_TEST (notice_numbers_only_grow)
{
  StgStore *store = store_test_open ();

  ck_assert_int_eq (next_seq (store, 0), 1);
  ck_assert_int_eq (next_seq (store, 0), 2);
  ck_assert_int_eq (next_seq (store, 10), 11);
  ck_assert_int_eq (next_seq (store, 3), 12);
  ck_assert (stg_store_begin (store, NULL));
  ck_assert_int_eq (next_seq (store, 0), 13);
  stg_store_rollback (store);
  ck_assert_int_eq (next_seq (store, 0), 13);
  stg_store_close (store);
  store = store_test_open ();
  ck_assert_int_eq (next_seq (store, 0), 14);
  stg_store_close (store);
}
END_TEST

START_TEST (notices_kept_bounded_and_deleted)
{
  g_autoptr (GError) error = NULL;
  StgStore *store = store_test_open ();

  for (gint64 seq = 1; seq <= 4; seq++)
    add (store, "ops", seq, 3);
  add (store, "", 2, 3);
  add (store, "", 4, 3);
  g_autofree gchar *first = rows (store);
  ck_assert_str_eq (first, ":2 :4 ops:2 ops:3 ops:4");
  add (store, "ops", 5, 2);
  g_autofree gchar *trimmed = rows (store);
  ck_assert_str_eq (trimmed, ":2 :4 ops:4 ops:5");
  ck_assert (stg_store_delete_notice (store, "ops", 4, &error));
  ck_assert (stg_store_delete_notice (store, "ops", 4, &error));
  ck_assert (stg_store_delete_notice (store, "", 2, &error));
  stg_store_close (store);
  store = store_test_open ();
  g_autofree gchar *left = rows (store);
  ck_assert_str_eq (left, ":4 ops:5");
  stg_store_close (store);
}
END_TEST

TCase *
store_notices_tcase (void)
{
  TCase *tc = tcase_create ("notices");

  tcase_add_checked_fixture (tc, store_test_setup, store_test_teardown);
  tcase_add_test (tc, notice_numbers_only_grow);
  tcase_add_test (tc, notices_kept_bounded_and_deleted);
  return tc;
}
