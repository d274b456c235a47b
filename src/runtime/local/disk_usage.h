/* disk_usage.h: how much disk a folder's tree holds, as the disk limit of
 * the local runtime counts it (local_disk.c): allocated blocks
 * (st_blocks * 512) of everything under it, each inode once, no symlink
 * followed, no mount point crossed. POSIX and GLib only; safe on any
 * thread (the local runtime calls it from a GTask's worker).
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Folders deeper than this below the root are counted but not entered: a
 * walk holds one descriptor per level. */
#define STG_DISK_USAGE_DEPTH_MAX 128

/* The bytes allocated under the folder @root, itself included, or -1 with
 * @error: @root cannot be opened as a folder (a symlink cannot), or
 * @cancellable was cancelled. Entries that vanish or cannot be read during
 * the walk are skipped. */
gint64 stg_disk_usage (const gchar *root, GCancellable *cancellable, GError **error);

G_END_DECLS
