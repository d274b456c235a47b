/* suggest.h: "did you mean ...?" for mistyped keys and command names.
 *
 * Edit distance with adjacent transpositions (optimal string alignment),
 * compared without case, plus a prefix rule for abbreviations. Pure
 * functions; any thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The candidate (NULL-terminated list) closest to @word when it is close
 * enough to be a likely typo, else NULL. Ties go to the earlier candidate. */
const gchar *stg_cli_suggest (const gchar *word, const gchar *const *candidates);

G_END_DECLS
