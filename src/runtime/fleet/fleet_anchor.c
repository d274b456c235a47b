/* fleet_anchor.c: the anchor image, the one image every pod's anchor (and
 * every hot sidecar's empty slot) runs: stagger-anchor, a static program
 * of the project (src/anchor/), read once when the runtime is made and
 * imported into each host the first time a pod is placed there, as a tar
 * archive of that one file (POST /images/create?fromSrc=-), tagged by its
 * digest, so the hosts need nothing installed and every host runs the
 * anchor of this staggerd. Slots wait on their host's import in a queue.
 * Calls docker.c. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "runtime/fleet/fleet_private.h"

/* The program's name in the image, at its root. */
#define ANCHOR_FILE "stagger-anchor"
/* Larger files are not the anchor. */
#define ANCHOR_MAX (64 * 1024 * 1024)
#define BLOCK 512

/* A ustar header for the file @name of @size bytes, mode 0555, root's. */
static void
tar_header (guint8 *h, const gchar *name, gsize size)
{
  guint sum = 0;

  memset (h, 0, BLOCK);
  g_strlcpy ((gchar *) h, name, 100);
  memcpy (h + 100, "0000555", 8);
  memcpy (h + 108, "0000000", 8);
  memcpy (h + 116, "0000000", 8);
  g_snprintf ((gchar *) h + 124, 12, "%011" G_GSIZE_MODIFIER "o", size);
  memcpy (h + 136, "00000000000", 12);
  memset (h + 148, ' ', 8);
  h[156] = '0';
  memcpy (h + 257, "ustar", 6);
  memcpy (h + 263, "00", 2);
  g_strlcpy ((gchar *) h + 265, "root", 32);
  g_strlcpy ((gchar *) h + 297, "root", 32);
  for (guint i = 0; i < BLOCK; i++)
    sum += h[i];
  g_snprintf ((gchar *) h + 148, 8, "%06o", sum);
  h[155] = ' ';
}

/* A tar archive holding @data as ANCHOR_FILE. */
static GBytes *
make_tar (const gchar *data, gsize size)
{
  gsize padded = (size + BLOCK - 1) / BLOCK * BLOCK;
  gsize total = BLOCK + padded + 2 * BLOCK;
  guint8 *tar = g_malloc0 (total);

  tar_header (tar, ANCHOR_FILE, size);
  memcpy (tar + BLOCK, data, size);
  return g_bytes_new_take (tar, total);
}

/* How to give staggerd an anchor, said with every reason it has none. */
#define ANCHOR_FIX \
  "give staggerd --anchor=PATH (or anchor = PATH in its config file), " \
  "PATH the stagger-anchor built with it"

void
stg_fleet_anchor_load (StgFleetRuntime *rt, const gchar *path)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *data = NULL;
  gsize size = 0;

  /* Nothing said yet: only a pod asked for needs it (stg_fleet_anchor_missing). */
  if (path == NULL)
    {
      rt->anchor_error = g_strdup ("staggerd has no stagger-anchor: " ANCHOR_FIX);
      return;
    }
  if (!g_file_get_contents (path, &data, &size, &error) || size > ANCHOR_MAX || size < 4 ||
      memcmp (data, "\177ELF", 4) != 0)
    {
      rt->anchor_error = g_strdup_printf ("cannot use stagger-anchor %s: %s; " ANCHOR_FIX, path,
                                          error ? error->message : "not a program");
      return;
    }
  g_autofree gchar *digest = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) data,
                                                          size);
  rt->anchor_image = g_strdup_printf ("localhost/stagger-anchor:%.16s", digest);
  rt->anchor_tar = make_tar (data, size);
}

const gchar *
stg_fleet_anchor_missing (StgFleetRuntime *rt, const gchar *what)
{
  if (!rt->anchor_warned)
    g_warning ("fleet: %s, but there are no pods: %s", what, rt->anchor_error);
  rt->anchor_warned = TRUE;
  return rt->anchor_error;
}

static void
on_imported (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Host *h = data;
  g_autoptr (GError) error = NULL;

  if (!stg_docker_finish (NULL, result, &error) &&
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* the runtime is being freed */
  h->anchor = error == NULL ? ANCHOR_READY : ANCHOR_UNKNOWN;
  g_autoptr (GPtrArray) waiting = g_steal_pointer (&h->anchor_waiting);
  h->anchor_waiting = g_ptr_array_new ();
  if (error == NULL)
    g_message ("fleet: host %s has the anchor image %s", h->config->name, h->rt->anchor_image);
  for (guint i = 0; i < waiting->len; i++)
    {
      Slot *slot = waiting->pdata[i];
      if (error == NULL)
        slot->rt->calls->create_anchor (slot);
      else
        stg_fleet_start_failed (slot, "cannot import the anchor image", error);
    }
}

void
stg_fleet_anchor_ensure (Slot *slot)
{
  Host *h = slot->host;
  StgFleetRuntime *rt = slot->rt;

  if (h->anchor == ANCHOR_READY)
    {
      slot->rt->calls->create_anchor (slot);
      return;
    }
  g_ptr_array_add (h->anchor_waiting, slot);
  if (h->anchor == ANCHOR_IMPORTING)
    return;
  h->anchor = ANCHOR_IMPORTING;
  g_autofree gchar *m = g_strdup_printf ("importing the anchor image %s on %s", rt->anchor_image,
                                         h->config->name);
  stg_slot_set_cause (&slot->base, m);
  stg_docker_import_async (h->docker, rt->anchor_image, rt->anchor_tar, h->cancel, on_imported, h);
}

void
stg_fleet_anchor_lost (Host *h)
{
  if (h->anchor == ANCHOR_READY)
    h->anchor = ANCHOR_UNKNOWN;
}

void
stg_fleet_anchor_forget (Slot *slot)
{
  for (guint i = 0; i < slot->rt->hosts->len; i++)
    {
      Host *h = slot->rt->hosts->pdata[i];
      while (h->anchor_waiting != NULL && g_ptr_array_remove (h->anchor_waiting, slot))
        ;
    }
}
