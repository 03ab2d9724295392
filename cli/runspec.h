/* runspec.h — heatcurvectl run's phase options ("cpu,until=plateau,max=90m") to the POST body. */
#pragma once

#include <json-c/json.h>

/* kind is "idle", "stress" or "cooldown"; spec as on the command line.
 * Returns the phase object, or NULL after printing what is wrong. */
json_object *runspec_phase(const char *kind, const char *spec, unsigned index);
