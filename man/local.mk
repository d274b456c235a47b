# man/local.mk: manual pages.
dist_man_MANS += man/staggerd.8
EXTRA_DIST += man/local.mk
