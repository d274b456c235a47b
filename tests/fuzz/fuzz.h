/* fuzz.h: what the fuzz targets share: libFuzzer's entry point. Built with
 * --enable-fuzzing they link libFuzzer; otherwise replay.c drives them over
 * the seed corpus (and simple mutations of it) in `make check`. */
#pragma once

#include <glib.h>

int LLVMFuzzerTestOneInput (const guint8 *data, gsize size);
