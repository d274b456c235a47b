/* reply_cache.c: StgReplyCache, encoded answers of read calls kept until
 * the store next changes.
 *
 * A key is whatever the dispatcher says makes two calls the same (method,
 * protocols, caller, the arguments' bytes); a value is the reply's bytes
 * after its message header, so a hit is answered with a fresh header (the
 * caller's sequence id) and the kept rest. Every entry was made at one store
 * generation; a lookup at another generation empties the cache first. At
 * most MAX_ENTRIES entries and MAX_BYTES bytes are kept. Main-loop thread
 * only.
 */
#include "config.h"

#include "api/reply_cache.h"

#define MAX_ENTRIES 256
#define MAX_BYTES (32 * 1024 * 1024)

struct _StgReplyCache
{
  guint64 generation;
  gsize bytes;         /* the values' sizes */
  GHashTable *entries; /* GBytes key -> GBytes tail */
};

StgReplyCache *
stg_reply_cache_new (void)
{
  StgReplyCache *cache = g_new0 (StgReplyCache, 1);

  cache->entries = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                          (GDestroyNotify) g_bytes_unref,
                                          (GDestroyNotify) g_bytes_unref);
  return cache;
}

void
stg_reply_cache_free (StgReplyCache *cache)
{
  if (cache == NULL)
    return;
  g_hash_table_unref (cache->entries);
  g_free (cache);
}

static void
at_generation (StgReplyCache *cache, guint64 generation)
{
  if (cache->generation == generation)
    return;
  g_hash_table_remove_all (cache->entries);
  cache->bytes = 0;
  cache->generation = generation;
}

GBytes *
stg_reply_cache_lookup (StgReplyCache *cache, guint64 generation, GBytes *key)
{
  at_generation (cache, generation);
  GBytes *tail = g_hash_table_lookup (cache->entries, key);
  return tail != NULL ? g_bytes_ref (tail) : NULL;
}

void
stg_reply_cache_store (StgReplyCache *cache, guint64 generation, GBytes *key, GBytes *tail)
{
  gsize size = g_bytes_get_size (tail);

  at_generation (cache, generation);
  if (size > MAX_BYTES / 4 || g_hash_table_contains (cache->entries, key))
    return;
  if (g_hash_table_size (cache->entries) >= MAX_ENTRIES || cache->bytes + size > MAX_BYTES)
    {
      g_hash_table_remove_all (cache->entries);
      cache->bytes = 0;
    }
  g_hash_table_insert (cache->entries, g_bytes_ref (key), g_bytes_ref (tail));
  cache->bytes += size;
}
