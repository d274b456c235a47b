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

# make deb: the Debian package, built from the release tarball with
# Debian's tools (dpkg-buildpackage, debhelper): the tarball unpacked in
# deb-build/, packaging/debian/ laid into it as debian/, and the .deb
# copied here. make package-check installs that .deb into a fresh Debian
# root (scripts/package-check) and tries it there, then the image.
STG_DEB_FILES = packaging/debian/changelog packaging/debian/control packaging/debian/copyright \
	packaging/debian/rules packaging/debian/source/format packaging/debian/postinst \
	packaging/debian/postrm packaging/debian/stagger.install packaging/debian/stagger.examples \
	packaging/debian/staggerd.conf packaging/debian/staggerd.service.d/debian.conf \
	packaging/debian/stagger.lintian-overrides
EXTRA_DIST += $(STG_DEB_FILES) scripts/package-check scripts/image packaging/Containerfile \
	packaging/container-entrypoint tests/image_ha.py
STG_DEB_VERSION = `dpkg-parsechangelog -l $(srcdir)/packaging/debian/changelog -S Version`

deb: dist-gzip
	@v=$(STG_DEB_VERSION); case "$$v" in $(VERSION)-*) ;; *) \
	  echo "packaging/debian/changelog is at $$v, the tarball at $(VERSION): add an entry" >&2; \
	  exit 1;; esac
	rm -rf deb-build
	$(MKDIR_P) deb-build
	tar -C deb-build -xzf $(distdir).tar.gz
	cp $(distdir).tar.gz deb-build/$(PACKAGE)_$(VERSION).orig.tar.gz
	cp -R $(srcdir)/packaging/debian deb-build/$(distdir)/debian
	cd deb-build/$(distdir) && \
	  DEB_BUILD_OPTIONS="parallel=$$(nproc) $${DEB_BUILD_OPTIONS:-}" dpkg-buildpackage -us -uc -b
	cp deb-build/$(PACKAGE)_$(STG_DEB_VERSION)_*.deb .
	-lintian --info deb-build/*.changes

# make image: staggerd's container image made from that package
# (scripts/image), saved as stagger-image-VERSION.tar.
image: deb
	$(top_srcdir)/scripts/image $(PACKAGE)_$(STG_DEB_VERSION)_*.deb .

package-check: deb
	PYTHON3=$(PYTHON3) $(top_srcdir)/scripts/package-check $(PACKAGE)_$(STG_DEB_VERSION)_*.deb

clean-local: clean-deb
clean-deb:
	rm -rf deb-build $(PACKAGE)_*.deb stagger-image-*.tar
.PHONY: deb image package-check clean-deb
