/* api-runs.h — runs over HTTP: start, list, show, samples, stop, delete, compare; auth for the mutating ones. */
#pragma once

#include <stdbool.h>

#include "http.h"

struct daemon;

/* Answers and returns true when the path belongs to runs or compare. */
bool api_runs_dispatch(struct daemon *d, struct http_request *r);
