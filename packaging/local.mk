# packaging/local.mk: what `make install` puts beside the programs for a
# system install: staggerd's systemd unit and stagger's bash completion.
# Override the directories on the command line, e.g.
#   make install systemdsystemunitdir=/usr/lib/systemd/system
systemdsystemunitdir = $(prefix)/lib/systemd/system
bashcompletiondir = $(datadir)/bash-completion/completions

systemdsystemunit_DATA = packaging/staggerd.service
bashcompletion_DATA = packaging/stagger

packaging/staggerd.service: packaging/staggerd.service.in Makefile
	@$(MKDIR_P) packaging
	$(AM_V_GEN)$(SED) -e 's|@sbindir[@]|$(sbindir)|g' $(srcdir)/packaging/staggerd.service.in > $@

packaging/stagger: packaging/stagger.bash
	@$(MKDIR_P) packaging
	$(AM_V_GEN)cp $(srcdir)/packaging/stagger.bash $@

CLEANFILES += packaging/staggerd.service packaging/stagger
EXTRA_DIST += packaging/local.mk packaging/staggerd.service.in packaging/stagger.bash
