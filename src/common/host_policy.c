/* host_policy.c: StgHostPolicy, where staggerd's own requests may go (see
 * host_policy.h). Calls only GLib and GIO's address types; any thread.
 */
#include "config.h"

#include <string.h>

#include "common/host_policy.h"

G_DEFINE_QUARK (stg-host-policy-error-quark, stg_host_policy_error)

struct _StgHostPolicy
{
  gchar *what;         /* the setting, for messages */
  gboolean restricted; /* patterns were given: nothing else is allowed */
  GPtrArray *names;    /* gchar*: host name patterns, lower case */
  GPtrArray *masks;    /* GInetAddressMask*: addresses and blocks */
};

/* Never reached unless an address pattern covers them; the first that
 * matches names the address in messages. */
static const struct
{
  const gchar *block;
  const gchar *kind;
} refused[] = {
  { "169.254.169.254/32", "the cloud metadata address" },
  { "100.100.100.200/32", "a cloud metadata address" },
  { "fd00:ec2::254/128", "a cloud metadata address" },
  { "169.254.0.0/16", "a link-local address" },
  { "fe80::/10", "a link-local address" },
};

static void
policy_clear (gpointer data)
{
  StgHostPolicy *p = data;

  g_free (p->what);
  g_clear_pointer (&p->names, g_ptr_array_unref);
  g_clear_pointer (&p->masks, g_ptr_array_unref);
}

StgHostPolicy *
stg_host_policy_ref (StgHostPolicy *p)
{
  return g_atomic_rc_box_acquire (p);
}

void
stg_host_policy_unref (StgHostPolicy *p)
{
  if (p != NULL)
    g_atomic_rc_box_release_full (p, policy_clear);
}

/* TRUE when @pattern may be a host name pattern: letters, digits, '.',
 * '-', '_' and '*'. */
static gboolean
name_pattern (const gchar *pattern)
{
  if (pattern[0] == '\0')
    return FALSE;
  for (const gchar *c = pattern; *c != '\0'; c++)
    if (!g_ascii_isalnum (*c) && strchr (".-_*", *c) == NULL)
      return FALSE;
  return TRUE;
}

StgHostPolicy *
stg_host_policy_new (const gchar *const *patterns, const gchar *what, GError **error)
{
  g_autoptr (StgHostPolicy) p = g_atomic_rc_box_new0 (StgHostPolicy);

  p->what = g_strdup (what);
  p->names = g_ptr_array_new_with_free_func (g_free);
  p->masks = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; patterns != NULL && patterns[i] != NULL; i++)
    {
      GInetAddressMask *mask = g_inet_address_mask_new_from_string (patterns[i], NULL);
      p->restricted = TRUE;
      if (mask != NULL)
        g_ptr_array_add (p->masks, mask);
      else if (name_pattern (patterns[i]))
        g_ptr_array_add (p->names, g_ascii_strdown (patterns[i], -1));
      else
        {
          g_set_error (error, STG_HOST_POLICY_ERROR, STG_HOST_POLICY_ERROR_INVALID,
                       "'%s' is neither a host name pattern (such as *.example.com) nor an "
                       "address or CIDR block (such as 10.0.0.0/8)",
                       patterns[i]);
          return NULL;
        }
    }
  return g_steal_pointer (&p);
}

/* @address, or the IPv4 address an IPv4-mapped IPv6 one holds (owned). */
static GInetAddress *
unmapped (GInetAddress *address)
{
  const guint8 *b = g_inet_address_to_bytes (address);
  static const guint8 prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

  if (g_inet_address_get_family (address) == G_SOCKET_FAMILY_IPV6 &&
      memcmp (b, prefix, sizeof prefix) == 0)
    return g_inet_address_new_from_bytes (b + 12, G_SOCKET_FAMILY_IPV4);
  return g_object_ref (address);
}

static gboolean
in_block (const gchar *block, GInetAddress *address)
{
  g_autoptr (GInetAddressMask) mask = g_inet_address_mask_new_from_string (block, NULL);
  return mask != NULL && g_inet_address_mask_matches (mask, address);
}

gboolean
stg_host_policy_check (const StgHostPolicy *p, const gchar *host, GInetAddress *address,
                       GError **error)
{
  g_autoptr (GInetAddress) addr = unmapped (address);
  g_autofree gchar *text = g_inet_address_to_string (addr);
  g_autofree gchar *name = g_ascii_strdown (host != NULL ? host : text, -1);
  gboolean named = FALSE;

  for (guint i = 0; i < p->masks->len && !named; i++)
    named = g_inet_address_mask_matches (p->masks->pdata[i], addr);
  /* "where" is "10.1.2.3", or "a.example.com (10.1.2.3)". */
  g_autofree gchar *where = g_str_equal (name, text) ? g_strdup (text)
                                                     : g_strdup_printf ("%s (%s)", name, text);
  if (p->restricted && !named)
    {
      gboolean matched = FALSE;
      for (guint i = 0; i < p->names->len && !matched; i++)
        matched = g_pattern_match_simple (p->names->pdata[i], name);
      if (!matched)
        {
          g_set_error (error, STG_HOST_POLICY_ERROR, STG_HOST_POLICY_ERROR_REFUSED,
                       "%s is not in %s", where, p->what);
          return FALSE;
        }
    }
  for (guint i = 0; i < G_N_ELEMENTS (refused) && !named; i++)
    if (in_block (refused[i].block, addr))
      {
        g_set_error (error, STG_HOST_POLICY_ERROR, STG_HOST_POLICY_ERROR_REFUSED,
                     "%s is %s (%s): refused unless %s names it as an address or block", where,
                     refused[i].kind, refused[i].block, p->what);
        return FALSE;
      }
  return TRUE;
}
