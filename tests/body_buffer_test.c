/* body_buffer_test.c: Check suite for src/api/body_buffer.c, the budget
 * unfinished requests draw on: each client address holds at most its share
 * (an IPv6 /64 counting as one address), large messages leave the reserve
 * to small ones, one address takes at most its part of the reserve, and
 * everything comes back when the buffers go. */
#include "config.h"

#include <check.h>

#include "api/body_buffer.h"

#define MIB (1024 * 1024)

/* A buffer from @address announcing @want bytes, grown to @n of them;
 * NULL with @error when the budget refuses. */
static StgBodyBuffer *
take (StgBodyBudget *b, const gchar *address, gsize want, gsize n, GError **error)
{
  StgBodyBuffer *buf = g_new0 (StgBodyBuffer, 1);
  gsize avail = 0;

  stg_body_buffer_init (buf, b, address, want);
  if (stg_body_buffer_space (buf, n, &avail, error) == NULL)
    {
      stg_body_buffer_clear (buf);
      g_free (buf);
      return NULL;
    }
  ck_assert_uint_ge (avail, n);
  stg_body_buffer_grew (buf, n);
  return buf;
}

static void
drop (StgBodyBuffer *buf)
{
  stg_body_buffer_clear (buf);
  g_free (buf);
}

START_TEST (each_address_holds_its_share)
{
  StgBodyBudget b = { .max = 48 * MIB, .per_address = 16 * MIB, .reserve = MIB };
  g_autoptr (GError) error = NULL;

  StgBodyBuffer *big = take (&b, "10.0.0.1", 16 * MIB, 16 * MIB - 1, NULL);
  ck_assert_ptr_nonnull (big);
  ck_assert_uint_eq (b.used, 16 * MIB);
  /* More from the same address is refused, whatever its size. */
  ck_assert_ptr_null (take (&b, "10.0.0.1", 16 * MIB, 1, &error));
  ck_assert_str_eq (error->message, "unfinished messages from 10.0.0.1 hold 16777216 bytes "
                                    "already (at most 16777216 per address)");
  g_clear_error (&error);
  ck_assert_ptr_null (take (&b, "10.0.0.1", 300, 300, NULL));
  /* Another address is not. */
  StgBodyBuffer *other = take (&b, "10.0.0.2", 16 * MIB, 16 * MIB, NULL);
  ck_assert_ptr_nonnull (other);
  drop (big);
  drop (other);
  ck_assert_uint_eq (b.used, 0);
  ck_assert_ptr_null (b.held);
}
END_TEST

START_TEST (ipv6_counts_by_64)
{
  StgBodyBudget b = { .max = 48 * MIB, .per_address = MIB };

  StgBodyBuffer *one = take (&b, "2001:db8:1:2::1", MIB, MIB, NULL);
  ck_assert_ptr_nonnull (one);
  ck_assert_ptr_null (take (&b, "2001:db8:1:2:ffff::9", 300, 300, NULL));
  StgBodyBuffer *next = take (&b, "2001:db8:1:3::1", 300, 300, NULL);
  ck_assert_ptr_nonnull (next);
  /* An IPv4 address written as IPv6 is that IPv4 address. */
  StgBodyBuffer *v4 = take (&b, "192.0.2.7", MIB, MIB, NULL);
  ck_assert_ptr_nonnull (v4);
  ck_assert_ptr_null (take (&b, "::ffff:192.0.2.7", 300, 300, NULL));
  drop (one);
  drop (next);
  drop (v4);
  ck_assert_uint_eq (b.used, 0);
}
END_TEST

/* Large messages from many addresses fill all but the reserve; small ones
 * still get in, one address at most an eighth of the reserve. */
START_TEST (small_messages_keep_their_reserve)
{
  StgBodyBudget b = { .max = 8 * MIB, .per_address = 4 * MIB, .reserve = MIB };
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) held = g_ptr_array_new_with_free_func ((GDestroyNotify) drop);

  g_ptr_array_add (held, take (&b, "10.0.0.1", 4 * MIB, 4 * MIB, NULL));
  g_ptr_array_add (held, take (&b, "10.0.0.2", 3 * MIB, 3 * MIB, NULL));
  ck_assert_uint_eq (b.used, 7 * MIB);
  /* The pool is full: a large message is refused, even its first bytes. */
  ck_assert_ptr_null (take (&b, "10.0.0.3", MIB, 300, &error));
  ck_assert_str_eq (error->message, "unfinished messages hold 7340032 bytes already (at most "
                                    "8388608, the last 1048576 kept for messages of at most 65536 "
                                    "bytes)");
  /* Small ones go into the reserve... */
  StgBodyBuffer *pulse = take (&b, "10.0.0.4", 300, 300, NULL);
  ck_assert_ptr_nonnull (pulse);
  g_ptr_array_add (held, pulse);
  /* ... but one address takes at most an eighth of it (128 KiB). */
  g_ptr_array_add (held, take (&b, "10.0.0.5", 64 * 1024, 64 * 1024, NULL));
  g_ptr_array_add (held, take (&b, "10.0.0.5", 64 * 1024, 64 * 1024, NULL));
  ck_assert_ptr_null (take (&b, "10.0.0.5", 300, 300, NULL));
  /* A large sender's own address gets no room there either. */
  ck_assert_ptr_null (take (&b, "10.0.0.2", 300, 300, NULL));
  for (guint i = 0; i < held->len; i++)
    ck_assert_ptr_nonnull (held->pdata[i]);
  g_ptr_array_set_size (held, 0);
  ck_assert_uint_eq (b.used, 0);
  ck_assert_ptr_null (b.held);
}
END_TEST

/* A body of unknown size is small only while it is. */
START_TEST (unknown_sizes_grow_out_of_the_reserve)
{
  StgBodyBudget b = { .max = 2 * MIB, .reserve = MIB };
  StgBodyBuffer *fill = take (&b, "10.0.0.1", MIB, MIB, NULL);
  ck_assert_ptr_nonnull (fill);
  StgBodyBuffer chunked;
  gsize avail = 0;
  stg_body_buffer_init (&chunked, &b, "10.0.0.2", 0);
  ck_assert_ptr_nonnull (stg_body_buffer_space (&chunked, 1000, &avail, NULL));
  stg_body_buffer_grew (&chunked, avail);
  ck_assert_ptr_null (stg_body_buffer_space (&chunked, 1000, &avail, NULL));
  stg_body_buffer_clear (&chunked);
  drop (fill);
  ck_assert_uint_eq (b.used, 0);
}
END_TEST

START_TEST (steal_returns_the_reservation)
{
  StgBodyBudget b = { .max = MIB, .per_address = MIB };
  StgBodyBuffer buf;
  stg_body_buffer_init (&buf, &b, "127.0.0.1", 5);
  ck_assert (stg_body_buffer_append (&buf, (const guint8 *) "hello", 5, NULL));
  ck_assert_uint_eq (b.used, 5);
  g_autoptr (GBytes) bytes = stg_body_buffer_steal (&buf);
  ck_assert_uint_eq (g_bytes_get_size (bytes), 5);
  ck_assert_uint_eq (b.used, 0);
  ck_assert_ptr_null (b.held);
  stg_body_buffer_clear (&buf);
}
END_TEST

static Suite *
body_buffer_suite (void)
{
  Suite *s = suite_create ("body_buffer");
  TCase *tc = tcase_create ("budget");

  tcase_add_test (tc, each_address_holds_its_share);
  tcase_add_test (tc, ipv6_counts_by_64);
  tcase_add_test (tc, small_messages_keep_their_reserve);
  tcase_add_test (tc, unknown_sizes_grow_out_of_the_reserve);
  tcase_add_test (tc, steal_returns_the_reservation);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (body_buffer_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
