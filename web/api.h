/* api.h — the JSON API: routes requests to handlers that read the daemon's cached state. */
#pragma once

#include "http.h"

/* userdata is the struct daemon. */
void api_dispatch(void *userdata, struct http_request *r);
