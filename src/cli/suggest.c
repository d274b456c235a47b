/* suggest.c: edit distance and the closest-candidate rule. Pure; any thread. */
#include "config.h"

#include <string.h>

#include "cli/suggest.h"

/* The number of single-character insertions, deletions, substitutions and
 * swaps of neighbours that turn @a into @b, ignoring ASCII case. */
static guint
edit_distance (const gchar *a, const gchar *b)
{
  gsize n = strlen (a), m = strlen (b);
  g_autofree guint *d = g_new0 (guint, (n + 1) * (m + 1));
#define D(i, j) d[(i) * (m + 1) + (j)]

  for (gsize i = 0; i <= n; i++)
    D (i, 0) = (guint) i;
  for (gsize j = 0; j <= m; j++)
    D (0, j) = (guint) j;
  for (gsize i = 1; i <= n; i++)
    for (gsize j = 1; j <= m; j++)
      {
        gchar ca = g_ascii_tolower (a[i - 1]), cb = g_ascii_tolower (b[j - 1]);
        guint cost = ca == cb ? 0 : 1;
        guint best = MIN (MIN (D (i - 1, j) + 1, D (i, j - 1) + 1), D (i - 1, j - 1) + cost);
        if (i > 1 && j > 1 && ca == g_ascii_tolower (b[j - 2]) &&
            g_ascii_tolower (a[i - 2]) == cb)
          best = MIN (best, D (i - 2, j - 2) + 1);
        D (i, j) = best;
      }
  guint result = D (n, m);
#undef D
  return result;
}

/* How many edits a word of @len characters may be away and still count as
 * a typo: 1 for short words, up to 3 for long ones. */
static guint
allowed (gsize len)
{
  return (guint) CLAMP (len / 3, 1, 3);
}

const gchar *
stg_cli_suggest (const gchar *word, const gchar *const *candidates)
{
  const gchar *best = NULL;
  guint best_d = G_MAXUINT;
  gsize len = strlen (word);

  if (len == 0)
    return NULL;
  for (guint i = 0; candidates[i] != NULL; i++)
    {
      guint d = edit_distance (word, candidates[i]);
      if (d < best_d && d <= allowed (MAX (len, strlen (candidates[i]))))
        {
          best = candidates[i];
          best_d = d;
        }
    }
  if (best != NULL)
    return best;

  /* An abbreviation ("ram" for "ram_mb") of exactly one candidate. */
  if (len >= 3)
    for (guint i = 0; candidates[i] != NULL; i++)
      if (g_ascii_strncasecmp (candidates[i], word, len) == 0)
        {
          if (best != NULL)
            return NULL;
          best = candidates[i];
        }
  return best;
}
