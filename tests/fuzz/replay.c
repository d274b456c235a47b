/* replay.c: runs a fuzz target without libFuzzer, for `make check` with any
 * compiler: every file of the seed corpus folders given on the command
 * line, then each seed cut short at every length up to 256 bytes and with
 * each of its first 512 bytes flipped in turn. Exits 0 unless a run
 * crashes (the sanitizers report that). Prints "N passed, 0 failed".
 * Given one file instead of folders, runs just that input. */
#include "config.h"

#include <stdio.h>

#include "fuzz.h"

static guint runs;

static void
one (const guint8 *data, gsize len)
{
  LLVMFuzzerTestOneInput (data, len);
  runs++;
}

static void
seed (const gchar *path)
{
  g_autofree gchar *text = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &text, &len, NULL))
    return;
  guint8 *data = (guint8 *) text;
  one (data, len);
  for (gsize cut = 0; cut < len && cut < 256; cut++)
    one (data, cut);
  g_autofree guint8 *copy = g_memdup2 (data, len);
  for (gsize i = 0; i < len && i < 512; i++)
    {
      copy[i] ^= 0xff;
      one (copy, len);
      copy[i] = data[i];
    }
}

int
main (int argc, char **argv)
{
  guint seeds = 0;

  /* One file: run it once, to reproduce a finding. */
  if (argc == 2 && g_file_test (argv[1], G_FILE_TEST_IS_REGULAR))
    {
      g_autofree gchar *text = NULL;
      gsize len = 0;
      if (!g_file_get_contents (argv[1], &text, &len, NULL))
        return 1;
      one ((const guint8 *) text, len);
      return 0;
    }
  for (int i = 1; i < argc; i++)
    {
      g_autoptr (GDir) dir = g_dir_open (argv[i], 0, NULL);
      const gchar *name;
      if (dir == NULL)
        {
          fprintf (stderr, "replay: cannot open %s\n", argv[i]);
          return 1;
        }
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree gchar *path = g_build_filename (argv[i], name, NULL);
          seed (path);
          seeds++;
        }
    }
  if (seeds == 0)
    {
      fprintf (stderr, "replay: no seeds\n");
      return 1;
    }
  printf ("%u runs from %u seeds\n%u passed, 0 failed\n", runs, seeds, runs);
  return 0;
}
