/* common_test.c: Check suite for src/common: ranges, job keys, the clock,
 * the memory transport, canonical hashing and structs as JSON. */
#include "config.h"

#include <check.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "common/clock.h"
#include "common/host_policy.h"
#include "common/jobkey.h"
#include "common/json_write.h"
#include "common/json_check.h"
#include "common/mem_transport.h"
#include "common/ranges.h"
#include "common/strings.h"
#include "common/thrift_glue.h"
#include "common/thrift_json.h"
#include "common/tiers.h"
#include "zk/zk_private.h"

/* ---- ranges ------------------------------------------------------------- */

START_TEST (ranges_parse_and_format)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (StgRanges) r = stg_ranges_parse ("5-7,0-1,3,2", &error);

  ck_assert_ptr_nonnull (r);
  g_autofree gchar *text = stg_ranges_to_string (r);
  ck_assert_str_eq (text, "0-3,5-7");
  ck_assert_int_eq (stg_ranges_count (r), 7);
  ck_assert (stg_ranges_contains (r, 0));
  ck_assert (stg_ranges_contains (r, 3));
  ck_assert (!stg_ranges_contains (r, 4));
  ck_assert (stg_ranges_contains (r, 7));
  ck_assert (!stg_ranges_contains (r, 8));
  ck_assert (!stg_ranges_contains (r, -1));
  ck_assert_uint_eq (stg_ranges_n (r), 2);
}
END_TEST

START_TEST (ranges_merge_touching_and_overlapping)
{
  g_autoptr (StgRanges) r = stg_ranges_new ();

  stg_ranges_add (r, 10, 20);
  stg_ranges_add (r, 0, 4);
  stg_ranges_add (r, 5, 9);      /* touches both neighbours */
  stg_ranges_add (r, 15, 30);    /* overlaps */
  g_autofree gchar *text = stg_ranges_to_string (r);
  ck_assert_str_eq (text, "0-30");

  g_autoptr (StgRanges) asc = stg_ranges_new ();
  for (gint i = 0; i < 1000; i++)
    if (i % 10 != 9)
      stg_ranges_add_one (asc, i);
  ck_assert_uint_eq (stg_ranges_n (asc), 100);
  ck_assert_int_eq (stg_ranges_count (asc), 900);
}
END_TEST

START_TEST (ranges_parse_errors)
{
  static const gchar *const bad[] = { "", "a", "1-", "-1", "3-1", "1,,2", "1-2-3", "99999999999", "1 " };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (StgRanges) r = stg_ranges_parse (bad[i], &error);
      ck_assert_msg (r == NULL, "'%s' parsed", bad[i]);
      ck_assert (g_error_matches (error, STG_RANGES_ERROR, STG_RANGES_ERROR_INVALID));
    }
}
END_TEST

START_TEST (ranges_equal)
{
  g_autoptr (StgRanges) a = stg_ranges_parse ("0-2,4", NULL);
  g_autoptr (StgRanges) b = stg_ranges_parse ("4,2,1,0", NULL);
  g_autoptr (StgRanges) c = stg_ranges_parse ("0-4", NULL);

  ck_assert (stg_ranges_equal (a, b));
  ck_assert (!stg_ranges_equal (a, c));
}
END_TEST

/* ---- job keys ------------------------------------------------------------ */

START_TEST (job_key_checks)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobKey) good = stg_job_key_new ("www-data", "prod.1", "hello_world");
  g_autoptr (ApiJobKey) bad = stg_job_key_new ("www", "prod", "he llo");
  g_autoptr (ApiJobKey) empty = stg_job_key_new ("www", "", "x");
  g_autofree gchar *longname = g_strnfill (STG_JOB_KEY_PART_MAX + 1, 'a');
  g_autoptr (ApiJobKey) toolong = stg_job_key_new ("www", "prod", longname);

  ck_assert (stg_job_key_check (good, "key", &error));
  ck_assert (!stg_job_key_check (bad, "description.key", &error));
  ck_assert_str_eq (error->message,
                    "description.key.name 'he llo' may hold only letters, digits, '.', '_' and '-'");
  g_clear_error (&error);
  ck_assert (!stg_job_key_check (empty, "key", &error));
  ck_assert_str_eq (error->message, "key.environment is missing");
  g_clear_error (&error);
  ck_assert (!stg_job_key_check (toolong, "key", &error));
  g_clear_error (&error);
  ck_assert (!stg_job_key_check (NULL, "key", &error));
}
END_TEST

START_TEST (job_path_parse)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) p = stg_job_path_parse ("local/www/prod/hello/0-1,3", TRUE, &error);

  ck_assert_ptr_nonnull (p);
  ck_assert_str_eq (p->cluster, "local");
  ck_assert_str_eq (p->key->name, "hello");
  g_autofree gchar *text = stg_ranges_to_string (p->instances);
  ck_assert_str_eq (text, "0-1,3");

  g_autoptr (StgJobPath) q = stg_job_path_parse ("local/www/prod/hello/0", FALSE, &error);
  ck_assert_ptr_null (q);
  g_clear_error (&error);
  g_autoptr (StgJobPath) r = stg_job_path_parse ("www/prod/hello", TRUE, &error);
  ck_assert_ptr_null (r);
  g_clear_error (&error);
  g_autoptr (StgJobPath) s = stg_job_path_parse ("local/www/prod/hello", TRUE, &error);
  ck_assert_ptr_nonnull (s);
  ck_assert_ptr_null (s->instances);
}
END_TEST

/* ---- clock ----------------------------------------------------------------- */

static void
record (gpointer data)
{
  GArray *fired = data;
  gint v = (gint) fired->len;
  g_array_append_val (fired, v);
}

typedef struct
{
  StgClock *clock;
  GString *log;
  gint64 seen[3];
} Order;

static void fire_a (gpointer d) { Order *o = d; g_string_append_c (o->log, 'a'); o->seen[0] = stg_clock_now_ms (o->clock); }
static void fire_b (gpointer d) { Order *o = d; g_string_append_c (o->log, 'b'); o->seen[1] = stg_clock_now_ms (o->clock); }
static void fire_c (gpointer d) { Order *o = d; g_string_append_c (o->log, 'c'); o->seen[2] = stg_clock_now_ms (o->clock); }

START_TEST (fake_clock_fires_in_order)
{
  g_autoptr (StgClock) clock = stg_clock_new_fake (1000);
  Order o = { clock, g_string_new (NULL), { 0 } };

  stg_clock_add_timer (clock, 50, fire_b, &o);
  stg_clock_add_timer (clock, 10, fire_a, &o);
  guint c = stg_clock_add_timer (clock, 60, fire_c, &o);
  stg_clock_add_timer (clock, 50, fire_c, &o);   /* same due time as b: after b */
  stg_clock_cancel_timer (clock, c);
  ck_assert_uint_eq (stg_clock_pending (clock), 3);

  stg_clock_advance (clock, 49);
  ck_assert_str_eq (o.log->str, "a");
  ck_assert_int_eq (o.seen[0], 1010);
  stg_clock_advance (clock, 100);
  ck_assert_str_eq (o.log->str, "abc");
  ck_assert_int_eq (o.seen[1], 1050);
  ck_assert_int_eq (stg_clock_now_ms (clock), 1149);
  ck_assert_uint_eq (stg_clock_pending (clock), 0);
  g_string_free (o.log, TRUE);
}
END_TEST

static gboolean
array_has_one (gpointer data)
{
  return ((GArray *) data)->len == 1;
}

START_TEST (real_clock_timer_fires)
{
  g_autoptr (StgClock) clock = stg_clock_new_real ();
  g_autoptr (GArray) fired = g_array_new (FALSE, FALSE, sizeof (gint));
  gint64 before = stg_clock_now_ms (clock);

  stg_clock_add_timer (clock, 20, record, fired);
  guint cancelled = stg_clock_add_timer (clock, 10, record, fired);
  stg_clock_cancel_timer (clock, cancelled);
  while (fired->len == 0)
    g_main_context_iteration (NULL, TRUE);
  ck_assert (array_has_one (fired));
  ck_assert_int_ge (stg_clock_now_ms (clock) - before, 19);
}
END_TEST

/* ---- memory transport and serialization ----------------------------------- */

START_TEST (mem_transport_truncated_fails)
{
  g_autoptr (ApiJobKey) key = stg_job_key_new ("r", "e", "n");
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = stg_thrift_to_bytes (THRIFT_STRUCT (key), &error);
  gsize n = g_bytes_get_size (bytes);

  for (gsize cut = 0; cut < n; cut++)
    {
      g_autoptr (GBytes) part = g_bytes_new_from_bytes (bytes, 0, cut);
      g_autoptr (ApiJobKey) back = g_object_new (API_TYPE_JOB_KEY, NULL);
      ck_assert_msg (!stg_thrift_from_bytes (THRIFT_STRUCT (back), part, &error),
                     "a struct cut to %" G_GSIZE_FORMAT " bytes decoded", cut);
      g_clear_error (&error);
    }
  g_autoptr (ApiJobKey) back = stg_thrift_new_from_bytes (API_TYPE_JOB_KEY, bytes, &error);
  ck_assert_ptr_nonnull (back);
  ck_assert_str_eq (back->name, "n");

  /* Trailing bytes are an error too. */
  g_autoptr (GByteArray) more = g_byte_array_new ();
  g_byte_array_append (more, g_bytes_get_data (bytes, NULL), (guint) n);
  g_byte_array_append (more, (const guint8 *) "x", 1);
  g_autoptr (GBytes) longer = g_byte_array_free_to_bytes (g_steal_pointer (&more));
  g_autoptr (ApiJobKey) again = stg_thrift_new_from_bytes (API_TYPE_JOB_KEY, longer, &error);
  ck_assert_ptr_null (again);
  ck_assert (g_error_matches (error, STG_THRIFT_ERROR, STG_THRIFT_ERROR_TRAILING));
}
END_TEST

START_TEST (mem_transport_output_limit)
{
  g_autoptr (StgMemTransport) t = stg_mem_transport_new (NULL, 8);
  g_autoptr (GError) error = NULL;
  guint8 buf[16] = { 0 };

  ck_assert (thrift_transport_write (THRIFT_TRANSPORT (t), buf, 8, &error));
  ck_assert (!thrift_transport_write (THRIFT_TRANSPORT (t), buf, 1, &error));
  ck_assert_ptr_nonnull (error);
}
END_TEST

/* A task config with the same sets built in a different order. */
static ApiTaskConfig *
config_with (const gchar *const *ports, guint n, const gchar *link_order)
{
  g_autoptr (ApiJobKey) key = stg_job_key_new ("r", "e", "n");
  ApiTaskConfig *t = g_object_new (API_TYPE_TASK_CONFIG, "job", key, "isService", TRUE, NULL);

  for (guint i = 0; i < n; i++)
    g_hash_table_add (t->resources, g_object_new (API_TYPE_RESOURCE, "namedPort", ports[i], NULL));
  g_hash_table_add (t->resources, g_object_new (API_TYPE_RESOURCE, "ramMb", (gint64) 64, NULL));
  t->__isset_resources = TRUE;
  for (const gchar *p = link_order; *p; p++)
    {
      gchar k[2] = { *p, 0 };
      g_hash_table_insert (t->taskLinks, g_strdup (k), g_strdup ("http://x"));
    }
  t->__isset_taskLinks = TRUE;
  return t;
}

START_TEST (canonical_hash_ignores_set_order)
{
  static const gchar *const fwd[] = { "http", "admin", "debug", "grpc", "metrics" };
  static const gchar *const rev[] = { "metrics", "grpc", "debug", "admin", "http" };
  g_autoptr (ApiTaskConfig) a = config_with (fwd, 5, "abcdef");
  g_autoptr (ApiTaskConfig) b = config_with (rev, 5, "fedcba");
  g_autoptr (ApiTaskConfig) c = config_with (rev, 4, "fedcba");
  g_autoptr (GError) error = NULL;

  g_autofree gchar *ha = stg_thrift_hash (THRIFT_STRUCT (a), &error);
  g_autofree gchar *hb = stg_thrift_hash (THRIFT_STRUCT (b), &error);
  g_autofree gchar *hc = stg_thrift_hash (THRIFT_STRUCT (c), &error);
  ck_assert_str_eq (ha, hb);
  ck_assert_str_ne (ha, hc);
  ck_assert_uint_eq (strlen (ha), 64);
  ck_assert (stg_thrift_equal (THRIFT_STRUCT (a), THRIFT_STRUCT (b)));
  ck_assert (!stg_thrift_equal (THRIFT_STRUCT (a), THRIFT_STRUCT (c)));

  g_object_set (b, "priority", 1, NULL);
  g_autofree gchar *hb2 = stg_thrift_hash (THRIFT_STRUCT (b), &error);
  ck_assert_str_ne (ha, hb2);
}
END_TEST

/* A config as staggerd stored it before TaskConfig had production,
 * mesosFetcherUris, partitionPolicy and slaPolicy: fields added to the IDL
 * must leave its encoding and hash alone, or every job would be "changed"
 * by its own config after an upgrade. The hash was taken from the store of
 * a staggerd built before those fields existed. */
START_TEST (canonical_hash_survives_new_optional_fields)
{
  g_autoptr (ApiJobKey) key = stg_job_key_new ("www", "prod", "hash");
  g_autoptr (ApiIdentity) owner = g_object_new (API_TYPE_IDENTITY, "user", "www", NULL);
  g_autoptr (ApiExecutorConfig) exec = g_object_new (API_TYPE_EXECUTOR_CONFIG, "name", "stagger",
                                                     "data", "{\"command\": \"sleep 60\"}", NULL);
  g_autoptr (ApiTaskConfig) t = g_object_new (API_TYPE_TASK_CONFIG, "job", key, "owner", owner,
                                              "isService", TRUE, "priority", 0, "maxTaskFailures",
                                              1, "tier", "preemptible", "executorConfig", exec,
                                              NULL);
  g_autoptr (GError) error = NULL;

  g_hash_table_add (t->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", 0.5, NULL));
  g_hash_table_add (t->resources, g_object_new (API_TYPE_RESOURCE, "ramMb", (gint64) 64, NULL));
  g_hash_table_add (t->resources, g_object_new (API_TYPE_RESOURCE, "namedPort", "http", NULL));
  g_hash_table_add (t->metadata, g_object_new (API_TYPE_METADATA, "key", "k", "value", "v", NULL));
  t->__isset_metadata = TRUE;
  g_autofree gchar *hash = stg_thrift_hash (THRIFT_STRUCT (t), &error);
  ck_assert_str_eq (hash, "8182af5de48ff059a7f92ecbfaef40a63b66940832fbaba0a6f9809a21ea431c");
  /* ... and a config that sets one of them differs. */
  g_object_set (t, "production", FALSE, NULL);
  g_autofree gchar *with = stg_thrift_hash (THRIFT_STRUCT (t), &error);
  ck_assert_str_ne (hash, with);
}
END_TEST

START_TEST (canonicalize_rejects_garbage)
{
  static const guint8 cut[] = { 12, 0, 1, 12, 0, 1, 12, 0, 1 };
  static const guint8 bad_type[] = { 99, 0, 1, 0 };
  static const guint8 huge_list[] = { 15, 0, 1, 8, 0x7f, 0xff, 0xff, 0xff, 0 };
  g_autoptr (GError) error = NULL;

  g_autoptr (GBytes) a = g_bytes_new_static (cut, sizeof cut);
  ck_assert_ptr_null (stg_thrift_canonicalize (a, &error));
  g_clear_error (&error);

  /* 100 nested structs, well formed, but deeper than allowed. */
  g_autoptr (GByteArray) deep = g_byte_array_new ();
  for (int i = 0; i < 100; i++)
    g_byte_array_append (deep, (const guint8 *) "\x0c\x00\x01", 3);
  for (int i = 0; i < 101; i++)
    g_byte_array_append (deep, (const guint8 *) "", 1);
  g_autoptr (GBytes) d = g_byte_array_free_to_bytes (g_steal_pointer (&deep));
  ck_assert_ptr_null (stg_thrift_canonicalize (d, &error));
  ck_assert_ptr_nonnull (strstr (error->message, "nesting"));
  g_clear_error (&error);
  g_autoptr (GBytes) b = g_bytes_new_static (bad_type, sizeof bad_type);
  ck_assert_ptr_null (stg_thrift_canonicalize (b, &error));
  g_clear_error (&error);
  g_autoptr (GBytes) c = g_bytes_new_static (huge_list, sizeof huge_list);
  ck_assert_ptr_null (stg_thrift_canonicalize (c, &error));
}
END_TEST

/* Doubles in the fewest digits that read back the same, still doubles. */
START_TEST (json_doubles_shortest)
{
  static const struct { gdouble value; const gchar *text; } cases[] = {
    { 0.1, "0.1" }, { 0.2, "0.2" }, { 1.1, "1.1" }, { 1.0, "1.0" }, { -2.5, "-2.5" },
    { 1e21, "1e+21" }, { 1.0 / 3.0, "0.3333333333333333" }, { 5e-324, "5e-324" }, { 0.30000000000000004, "0.30000000000000004" },
  };
  gchar buf[G_ASCII_DTOSTR_BUF_SIZE];

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      ck_assert_str_eq (stg_json_format_double (buf, cases[i].value), cases[i].text);
      ck_assert (g_ascii_strtod (buf, NULL) == cases[i].value);
    }
  ck_assert_str_eq (stg_json_format_double (buf, INFINITY), "null");
  g_autoptr (JsonNode) n = json_from_string ("{\"a\":[0.1,2,\"x\\\"\\n\",true,null],\"b\":{}}", NULL);
  g_autofree gchar *compact = stg_json_write (n, FALSE, NULL);
  ck_assert_str_eq (compact, "{\"a\":[0.1,2,\"x\\\"\\n\",true,null],\"b\":{}}");
  g_autofree gchar *pretty = stg_json_write (n, TRUE, NULL);
  ck_assert_str_eq (pretty, "{\n  \"a\" : [\n    0.1,\n    2,\n    \"x\\\"\\n\",\n    true,\n"
                    "    null\n  ],\n  \"b\" : {}\n}");
}
END_TEST

START_TEST (json_depth_bound)
{
  g_autoptr (GError) error = NULL;

  ck_assert (stg_json_check_depth (NULL, -1, 2, NULL));
  ck_assert (stg_json_check_depth ("[{\"a\": []}, [1]]", -1, 3, NULL));
  ck_assert (!stg_json_check_depth ("[{\"a\": []}, [1]]", -1, 2, &error));
  ck_assert (g_error_matches (error, STG_JSON_CHECK_ERROR, STG_JSON_CHECK_ERROR_TOO_DEEP));
  ck_assert_ptr_nonnull (strstr (error->message, "byte 7"));
  g_clear_error (&error);
  /* Brackets inside strings, escaped quotes included, do not count. */
  ck_assert (stg_json_check_depth ("[\"[[[\\\"[[\", \"{{\"]", -1, 1, NULL));
  ck_assert (!stg_json_check_depth ("[\"\\\\\", [[]]]", -1, 2, NULL));
  /* @len is respected: the deep tail lies past it. */
  ck_assert (stg_json_check_depth ("[][[[[", 2, 1, NULL));
  /* Closers never take the depth below zero. */
  ck_assert (!stg_json_check_depth ("]]]][[", -1, 1, NULL));
  g_autofree gchar *deep = g_strnfill (1000000, '[');
  ck_assert (!stg_json_check_depth (deep, -1, STG_JSON_NESTING_MAX, NULL));
}
END_TEST

/* stg_json_load: the depth check, then json-glib's parser. */
START_TEST (json_load_bounded)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_autofree gchar *deep = g_strnfill (100000, '[');

  ck_assert (stg_json_load (parser, "{\"a\": [1]}", -1, NULL));
  ck_assert (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
  ck_assert (!stg_json_load (parser, deep, -1, &error));
  ck_assert (g_error_matches (error, STG_JSON_CHECK_ERROR, STG_JSON_CHECK_ERROR_TOO_DEEP));
  g_clear_error (&error);
  ck_assert (!stg_json_load (parser, "{\"a\": ", -1, &error));
  ck_assert (error != NULL && error->domain == JSON_PARSER_ERROR);
  g_clear_error (&error);
  ck_assert (!stg_json_load (parser, NULL, -1, &error));
  ck_assert (g_error_matches (error, STG_JSON_CHECK_ERROR, STG_JSON_CHECK_ERROR_FAILED));
  g_clear_error (&error);
  ck_assert (!stg_json_load (parser, " ", -1, NULL));
}
END_TEST

/* ---- host policy -------------------------------------------------------------- */

/* What @policy says of a connection for @host to @address: "ok" or the
 * refusal's message. */
static gchar *
judge (const StgHostPolicy *policy, const gchar *host, const gchar *address)
{
  g_autoptr (GInetAddress) addr = g_inet_address_new_from_string (address);
  g_autoptr (GError) error = NULL;

  ck_assert_msg (addr != NULL, "bad address %s", address);
  if (stg_host_policy_check (policy, host, addr, &error))
    return g_strdup ("ok");
  ck_assert (g_error_matches (error, STG_HOST_POLICY_ERROR, STG_HOST_POLICY_ERROR_REFUSED));
  return g_strdup (error->message);
}

#define ASSERT_JUDGED(policy, host, address, want) \
  do \
    { \
      g_autofree gchar *said_ = judge (policy, host, address); \
      ck_assert_str_eq (said_, want); \
    } \
  while (0)

START_TEST (host_policy_default_refuses_link_local_and_metadata)
{
  g_autoptr (StgHostPolicy) p = stg_host_policy_new (NULL, "[gates] allowed_hosts", NULL);

  ASSERT_JUDGED (p, "127.0.0.1", "127.0.0.1", "ok");
  ASSERT_JUDGED (p, "prometheus.example.com", "10.1.2.3", "ok");
  ASSERT_JUDGED (p, "v6.example.com", "2001:db8::1", "ok");
  ASSERT_JUDGED (p, "169.254.169.254", "169.254.169.254",
                 "169.254.169.254 is the cloud metadata address (169.254.169.254/32): refused "
                 "unless [gates] allowed_hosts names it as an address or block");
  /* What a name resolves to is judged, not the name. */
  ASSERT_JUDGED (p, "metadata.google.internal", "169.254.169.254",
                 "metadata.google.internal (169.254.169.254) is the cloud metadata address "
                 "(169.254.169.254/32): refused unless [gates] allowed_hosts names it as an "
                 "address or block");
  ASSERT_JUDGED (p, "printer.local", "169.254.10.20",
                 "printer.local (169.254.10.20) is a link-local address (169.254.0.0/16): refused "
                 "unless [gates] allowed_hosts names it as an address or block");
  ASSERT_JUDGED (p, "fe80::1", "fe80::1",
                 "fe80::1 is a link-local address (fe80::/10): refused unless [gates] "
                 "allowed_hosts names it as an address or block");
  ASSERT_JUDGED (p, "::ffff:169.254.169.254", "::ffff:169.254.169.254",
                 "::ffff:169.254.169.254 (169.254.169.254) is the cloud metadata address "
                 "(169.254.169.254/32): refused unless [gates] allowed_hosts names it as an "
                 "address or block");
  ASSERT_JUDGED (p, "fd00:ec2::254", "fd00:ec2::254",
                 "fd00:ec2::254 is a cloud metadata address (fd00:ec2::254/128): refused unless "
                 "[gates] allowed_hosts names it as an address or block");
  ASSERT_JUDGED (p, "100.100.100.200", "100.100.100.200",
                 "100.100.100.200 is a cloud metadata address (100.100.100.200/32): refused "
                 "unless [gates] allowed_hosts names it as an address or block");
}
END_TEST

START_TEST (host_policy_allowed_patterns)
{
  const gchar *const patterns[] = { "*.Example.com", "10.0.0.0/8", "fd00::/8", NULL };
  g_autoptr (StgHostPolicy) p = stg_host_policy_new (patterns, "[gates] allowed_hosts", NULL);

  ASSERT_JUDGED (p, "Prom.EXAMPLE.com", "93.184.216.34", "ok");
  ASSERT_JUDGED (p, "anything", "10.200.0.1", "ok");
  ASSERT_JUDGED (p, "v6", "fd12::1", "ok");
  ASSERT_JUDGED (p, "example.org", "93.184.216.34",
                 "example.org (93.184.216.34) is not in [gates] allowed_hosts");
  ASSERT_JUDGED (p, "11.0.0.1", "11.0.0.1", "11.0.0.1 is not in [gates] allowed_hosts");
  /* A name pattern does not open the metadata address... */
  ASSERT_JUDGED (p, "meta.example.com", "169.254.169.254",
                 "meta.example.com (169.254.169.254) is the cloud metadata address "
                 "(169.254.169.254/32): refused unless [gates] allowed_hosts names it as an "
                 "address or block");
  /* ... an address pattern does. */
  const gchar *const open[] = { "169.254.169.254", "fe80::/10", NULL };
  g_autoptr (StgHostPolicy) q = stg_host_policy_new (open, "[gates] allowed_hosts", NULL);
  ASSERT_JUDGED (q, "metadata.google.internal", "169.254.169.254", "ok");
  ASSERT_JUDGED (q, "fe80::2", "fe80::2", "ok");
  ASSERT_JUDGED (q, "169.254.0.1", "169.254.0.1", "169.254.0.1 is not in [gates] allowed_hosts");
}
END_TEST

START_TEST (host_policy_bad_patterns)
{
  static const gchar *const bad[] = { "10.0.0.0/33", "http://x.example.com", "a:b", "" };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      const gchar *const patterns[] = { "ok.example.com", bad[i], NULL };
      g_autoptr (GError) error = NULL;
      g_autoptr (StgHostPolicy) p = stg_host_policy_new (patterns, "[gates] allowed_hosts", &error);
      ck_assert_msg (p == NULL, "'%s' was taken", bad[i]);
      g_autofree gchar *want = g_strdup_printf (
          "'%s' is neither a host name pattern (such as *.example.com) nor "
          "an address or CIDR block (such as 10.0.0.0/8)",
          bad[i]);
      ck_assert_str_eq (error->message, want);
    }
}
END_TEST

/* ---- tiers ------------------------------------------------------------------ */

START_TEST (tiers_default_are_auroras)
{
  g_autoptr (StgTiers) tiers = stg_tiers_new_default ();

  ck_assert_str_eq (stg_tiers_default_name (tiers), "preemptible");
  ck_assert_uint_eq (stg_tiers_count (tiers), 3);
  const StgTier *preferred = stg_tiers_lookup (tiers, "preferred");
  const StgTier *preemptible = stg_tiers_lookup (tiers, "preemptible");
  const StgTier *revocable = stg_tiers_lookup (tiers, "revocable");
  ck_assert (preferred && !preferred->preemptible && !preferred->revocable);
  ck_assert (preemptible && preemptible->preemptible && !preemptible->revocable);
  ck_assert (revocable && revocable->preemptible && revocable->revocable);
  ck_assert (stg_tier_is_production (preferred));
  ck_assert (!stg_tier_is_production (preemptible) && !stg_tier_is_production (revocable));
  ck_assert_ptr_null (stg_tiers_lookup (tiers, "gold"));
  /* Sorted by name. */
  ck_assert_str_eq (stg_tiers_get (tiers, 0)->name, "preemptible");
  ck_assert_str_eq (stg_tiers_get (tiers, 2)->name, "revocable");
}
END_TEST

START_TEST (tiers_from_json)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *dir = g_dir_make_tmp ("stg-tiers-XXXXXX", &error);
  g_autofree gchar *path = g_build_filename (dir, "tiers.json", NULL);
  ck_assert (g_file_set_contents (path,
                                  "{\"default\": \"gold\", \"tiers\": {\"gold\": {\"revocable\": "
                                  "false}, \"lead\": {\"preemptible\": true}}}",
                                  -1, &error));
  g_autoptr (StgTiers) tiers = stg_tiers_load (path, &error);
  ck_assert_msg (tiers != NULL, "%s", error ? error->message : "");
  ck_assert_str_eq (stg_tiers_default_name (tiers), "gold");
  ck_assert (stg_tier_is_production (stg_tiers_lookup (tiers, "gold")));
  ck_assert (!stg_tier_is_production (stg_tiers_lookup (tiers, "lead")));
  g_unlink (path);
  g_autoptr (StgTiers) none = stg_tiers_load (path, &error);
  ck_assert_ptr_null (none);
  ck_assert_ptr_nonnull (strstr (error->message, "tiers.json"));
  g_rmdir (dir);
}
END_TEST

static const struct
{
  const gchar *json, *says;
} bad_tiers[] = {
  { "[]", "expected a JSON object" },
  { "{", "not JSON" },
  { "{\"tiers\": {\"a\": {}}}", "default must name the default tier" },
  { "{\"default\": \"a\", \"tiers\": {}}", "tiers must be an object of at least one tier" },
  { "{\"default\": \"b\", \"tiers\": {\"a\": {}}}",
    "default is 'b', which is not one of the tiers" },
  { "{\"default\": \"a\", \"tiers\": {\"a\": {\"cheap\": true}}}", "tiers.a: unknown key 'cheap'" },
  { "{\"default\": \"a\", \"tiers\": {\"a\": {\"revocable\": 1}}}",
    "tiers.a.revocable must be true or false" },
  { "{\"default\": \"a\", \"tiers\": {\"a\": 3}}", "tiers.a must be an object" },
  { "{\"default\": \"a b\", \"tiers\": {\"a b\": {}}}", "is not a tier name" },
  { "{\"default\": \"a\", \"tiers\": {\"a\": {}}, \"extra\": 1}", "unknown key 'extra'" },
};

START_TEST (tiers_refused)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (StgTiers) tiers = stg_tiers_parse (bad_tiers[_i].json, -1, &error);

  ck_assert_ptr_null (tiers);
  ck_assert_int_eq (error->code, STG_TIERS_ERROR_INVALID);
  ck_assert_msg (strstr (error->message, bad_tiers[_i].says) != NULL, "'%s' does not say '%s'",
                 error->message, bad_tiers[_i].says);
}
END_TEST

/* GLib's sorts hand the comparator pointers to the elements: sorting by
 * the strings, not by where they are in memory. */
START_TEST (strings_sort_by_content)
{
  static const gchar *const names[] = { "prod", "local", "b", "staging", "a" };
  g_autoptr (GPtrArray) a = g_ptr_array_new ();

  /* Listed in an order unlike their names', so where they lie cannot agree
   * with the result by luck. */
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    g_ptr_array_add (a, (gpointer) names[i]);
  g_ptr_array_sort (a, stg_compare_string_ptrs);
  g_ptr_array_add (a, NULL);
  g_autofree gchar *joined = g_strjoinv (",", (gchar **) a->pdata);
  ck_assert_str_eq (joined, "a,b,local,prod,staging");
}
END_TEST

/* Thrift's TSimpleJSONProtocol form (what an SLA coordinator is sent)
 * beside the readable one: enums and booleans as numbers. */
START_TEST (thrift_simple_json_has_numbers)
{
  g_autoptr (ApiTaskConfig) config = g_object_new (API_TYPE_TASK_CONFIG, "isService", TRUE, NULL);
  g_autoptr (ApiAssignedTask) assigned = g_object_new (API_TYPE_ASSIGNED_TASK, "taskId", "t-0",
                                                       "task", config, "instanceId", 3, NULL);
  gint32 *port = g_new (gint32, 1);
  *port = 8080;
  g_hash_table_insert (assigned->assignedPorts, g_strdup ("http"), port);
  g_autoptr (ApiScheduledTask) task = g_object_new (API_TYPE_SCHEDULED_TASK, "assignedTask",
                                                    assigned, "status", API_SCHEDULE_STATUS_RUNNING,
                                                    NULL);

  g_autoptr (JsonNode) simple = stg_thrift_to_simple_json (task);
  g_autofree gchar *text = json_to_string (simple, FALSE);
  JsonObject *o = json_node_get_object (simple);
  JsonObject *a = json_object_get_object_member (o, "assignedTask");
  ck_assert_int_eq (json_object_get_int_member (o, "status"), API_SCHEDULE_STATUS_RUNNING);
  ck_assert_int_eq (json_object_get_int_member (a, "instanceId"), 3);
  ck_assert_str_eq (json_object_get_string_member (a, "taskId"), "t-0");
  ck_assert_int_eq (json_object_get_int_member (json_object_get_object_member (a, "assignedPorts"),
                                                "http"),
                    8080);
  JsonNode *service = json_object_get_member (json_object_get_object_member (a, "task"),
                                              "isService");
  ck_assert_msg (json_node_get_value_type (service) == G_TYPE_INT64 &&
                     json_node_get_int (service) == 1,
                 "%s", text);

  g_autoptr (JsonNode) readable = stg_thrift_to_json (task);
  ck_assert_str_eq (json_object_get_string_member (json_node_get_object (readable), "status"),
                    "RUNNING");
}
END_TEST

START_TEST (zk_member_json_is_auroras)
{
  g_autoptr (GHashTable) extra = g_hash_table_new (g_str_hash, g_str_equal);
  g_hash_table_insert (extra, "http", GINT_TO_POINTER (80));
  g_hash_table_insert (extra, "admin", GINT_TO_POINTER (81));
  g_autofree gchar *task = stg_zk_member_json ("h", 80, extra, 2);
  g_autofree gchar *leader = stg_zk_member_json ("h", 80, NULL, -1);
  g_autofree gchar *host = NULL;
  gint port = 0;

  ck_assert_str_eq (task, "{\"serviceEndpoint\":{\"host\":\"h\",\"port\":80},"
                          "\"additionalEndpoints\":{\"admin\":{\"host\":\"h\",\"port\":81},"
                          "\"http\":{\"host\":\"h\",\"port\":80}},\"status\":\"ALIVE\","
                          "\"shard\":2}");
  ck_assert_str_eq (leader, "{\"serviceEndpoint\":{\"host\":\"h\",\"port\":80},"
                            "\"additionalEndpoints\":{},\"status\":\"ALIVE\"}");
  ck_assert (stg_zk_member_endpoint (task, "admin", &host, &port));
  ck_assert_str_eq (host, "h");
  ck_assert_int_eq (port, 81);
  g_clear_pointer (&host, g_free);
  ck_assert (stg_zk_member_endpoint (leader, NULL, &host, &port) && port == 80);
  ck_assert (!stg_zk_member_endpoint (leader, "http", &host, &port));
  ck_assert (!stg_zk_member_endpoint ("not json", NULL, &host, &port));
  ck_assert (!stg_zk_member_endpoint ("{\"serviceEndpoint\":{\"host\":\"h\",\"port\":70000}}", NULL,
                                      &host, &port));
}
END_TEST

START_TEST (zk_ensembles_and_paths)
{
  const gchar *good[] = { "a:1", "a:2181,b:2182", "10.0.0.1:2181/chroot/x", NULL };
  const gchar *bad[] = { "", "a", "a:0", "a:x", "a:1,", ":1", "a:1/x/", "a:1//x", NULL };
  const gchar *paths[] = { "/", "/aurora", "/aurora/www/prod/web", NULL };
  const gchar *not_paths[] = { "aurora", "/aurora/", "/a//b", "/a/../b", "/a/./b", NULL };

  for (guint i = 0; good[i] != NULL; i++)
    ck_assert_msg (stg_zk_ensemble_check (good[i], NULL), "%s", good[i]);
  for (guint i = 0; bad[i] != NULL; i++)
    {
      g_autoptr (GError) error = NULL;
      ck_assert_msg (!stg_zk_ensemble_check (bad[i], &error), "%s", bad[i]);
      ck_assert (g_error_matches (error, STG_ZK_ERROR, STG_ZK_ERROR_INVALID));
    }
  for (guint i = 0; paths[i] != NULL; i++)
    ck_assert_msg (stg_zk_path_check (paths[i], NULL), "%s", paths[i]);
  for (guint i = 0; not_paths[i] != NULL; i++)
    ck_assert_msg (!stg_zk_path_check (not_paths[i], NULL), "%s", not_paths[i]);
}
END_TEST

START_TEST (zk_auth_file_as_auroras)
{
  const gchar *text = "{\"auth\": [{\"scheme\": \"digest\", \"credential\": \"u:p\"}],"
                      " \"acl\": [{\"scheme\": \"digest\", \"credential\": \"u:p\","
                      " \"permissions\": {\"read\": true, \"admin\": true, \"write\": false}}]}";
  g_autoptr (StgZkAuth) auth = stg_zk_auth_parse (text, "auth.json", NULL);
  struct
  {
    const gchar *text, *error;
  } bad[] = {
    { "[]", "auth.json: a JSON object" },
    { "{\"acls\": []}", "auth.json.acls: no such key" },
    { "{\"auth\": {}}", "auth.json.auth: a list is required" },
    { "{\"auth\": [{\"scheme\": \"digest\"}]}", "auth.json.auth[0].credential: a string" },
    { "{\"acl\": [{\"scheme\": \"digest\", \"credential\": \"nocolon\", \"permissions\": {}}]}",
      "auth.json.acl[0]: a digest credential is user:password" },
    { "{\"acl\": [{\"scheme\": \"world\", \"credential\": \"anyone\"}]}",
      "auth.json.acl[0].permissions: an object is required" },
    { "{\"acl\": [{\"scheme\": \"world\", \"credential\": \"anyone\", \"permissions\": "
      "{\"read\": 1}}]}",
      "auth.json.acl[0].permissions.read: true or false" },
  };

  ck_assert (auth != NULL);
  struct ACL_vector *acl = stg_zk_auth_acl (auth);
  ck_assert_int_eq (acl->count, 1);
  ck_assert_str_eq (acl->data[0].id.scheme, "digest");
  ck_assert_str_eq (acl->data[0].id.id, "u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ=");
  ck_assert_int_eq (acl->data[0].perms, ZOO_PERM_READ | ZOO_PERM_ADMIN);
  ck_assert (stg_zk_auth_acl (NULL) == &ZOO_OPEN_ACL_UNSAFE);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      ck_assert_msg (stg_zk_auth_parse (bad[i].text, "auth.json", &error) == NULL, "%s",
                     bad[i].text);
      ck_assert_msg (strstr (error->message, bad[i].error) != NULL, "%s: %s", bad[i].text,
                     error->message);
    }
}
END_TEST

static Suite *
common_suite (void)
{
  Suite *s = suite_create ("common");
  TCase *tc;

  tc = tcase_create ("ranges");
  tcase_add_test (tc, ranges_parse_and_format);
  tcase_add_test (tc, ranges_merge_touching_and_overlapping);
  tcase_add_test (tc, ranges_parse_errors);
  tcase_add_test (tc, ranges_equal);
  suite_add_tcase (s, tc);

  tc = tcase_create ("strings");
  tcase_add_test (tc, strings_sort_by_content);
  suite_add_tcase (s, tc);

  tc = tcase_create ("jobkey");
  tcase_add_test (tc, job_key_checks);
  tcase_add_test (tc, job_path_parse);
  suite_add_tcase (s, tc);

  tc = tcase_create ("json");
  tcase_add_test (tc, json_depth_bound);
  tcase_add_test (tc, json_load_bounded);
  tcase_add_test (tc, json_doubles_shortest);
  suite_add_tcase (s, tc);

  tc = tcase_create ("host_policy");
  tcase_add_test (tc, host_policy_default_refuses_link_local_and_metadata);
  tcase_add_test (tc, host_policy_allowed_patterns);
  tcase_add_test (tc, host_policy_bad_patterns);
  suite_add_tcase (s, tc);

  tc = tcase_create ("tiers");
  tcase_add_test (tc, tiers_default_are_auroras);
  tcase_add_test (tc, tiers_from_json);
  tcase_add_loop_test (tc, tiers_refused, 0, G_N_ELEMENTS (bad_tiers));
  suite_add_tcase (s, tc);

  tc = tcase_create ("clock");
  tcase_add_test (tc, fake_clock_fires_in_order);
  tcase_add_test (tc, real_clock_timer_fires);
  suite_add_tcase (s, tc);

  tc = tcase_create ("zookeeper");
  tcase_add_test (tc, zk_member_json_is_auroras);
  tcase_add_test (tc, zk_ensembles_and_paths);
  tcase_add_test (tc, zk_auth_file_as_auroras);
  suite_add_tcase (s, tc);

  tc = tcase_create ("thrift");
  tcase_add_test (tc, thrift_simple_json_has_numbers);
  tcase_add_test (tc, mem_transport_truncated_fails);
  tcase_add_test (tc, mem_transport_output_limit);
  tcase_add_test (tc, canonical_hash_ignores_set_order);
  tcase_add_test (tc, canonical_hash_survives_new_optional_fields);
  tcase_add_test (tc, canonicalize_rejects_garbage);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (common_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
