/* history-save.h — history.bin replaced atomically: the ring's file format written through core's atomic file. */
#pragma once

#include "history.h"

/* Writes h to path.tmp, fsyncs, renames it over path and fsyncs the
 * directory: a crash leaves the old file or the new one, whole. -errno. */
int history_save(const struct history *h, const char *path);
