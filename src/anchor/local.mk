# src/anchor/local.mk: stagger-anchor, the fleet pods' small program (plain
# C, libc only, linked statically: it runs in any image, and is the only
# file of the anchor image staggerd imports into each host). Built without
# the sanitizers, which a static program cannot link.
pkglibexec_PROGRAMS += stagger-anchor
stagger_anchor_SOURCES = src/anchor/anchor.c
stagger_anchor_CPPFLAGS =
stagger_anchor_CFLAGS = -std=gnu11 -O2 $(WARN_CFLAGS) $(WERROR_CFLAGS)
stagger_anchor_LDFLAGS = -static
stagger_anchor_LDADD =
EXTRA_DIST += src/anchor/local.mk
