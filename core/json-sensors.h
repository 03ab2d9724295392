/* json-sensors.h — the sensors document (GET /api/v1/sensors, heatcurved --once). */
#pragma once

#include <json-c/json.h>

#include "sensors.h"

json_object *json_sensors_document(const struct sensors *s);
json_object *json_board(const struct board_info *b);
