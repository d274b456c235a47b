/* reply_cache.h: encoded answers of read calls, kept until the store next
 * changes (see reply_cache.c). Main-loop thread only. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _StgReplyCache StgReplyCache;

StgReplyCache *stg_reply_cache_new (void);
void stg_reply_cache_free (StgReplyCache *cache);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgReplyCache, stg_reply_cache_free)

/* The kept reply tail for @key (new reference), or NULL. Entries of another
 * @generation than the one given are dropped first. */
GBytes *stg_reply_cache_lookup (StgReplyCache *cache, guint64 generation, GBytes *key);

/* Keeps @tail (referenced) for @key, made at @generation. */
void stg_reply_cache_store (StgReplyCache *cache, guint64 generation, GBytes *key, GBytes *tail);

G_END_DECLS
