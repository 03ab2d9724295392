/* runspec.h — heatcurvectl run's phase options ("cpu,until=plateau,max=90m") to the POST body. */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

/* kind is "idle", "stress" or "cooldown"; spec as on the command line; index
 * the phase's place in the run. Checks only the syntax (known keys, durations,
 * numbers); what the values mean is the server's to judge. Returns the phase
 * object, or NULL after printing what is wrong, naming the phase and the key. */
json_object *runspec_phase(const char *kind, const char *spec, size_t index);
