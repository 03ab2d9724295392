/* service-checks.h — start-up checks of settings that heatcurved.service's sandbox would break. */
#pragma once

#include "config.h"

/* Logs, once at start, each setting that the unit's hardening will defeat
 * (a stress_dir under ProtectSystem=strict, a LAN listen address behind
 * IPAddressDeny=, as systemd tells the unit's filter over the system bus),
 * naming the drop-in that fixes it. Never fails the start: the daemon
 * still monitors; only the affected feature is lost. */
void service_checks_log(const struct config *cfg);
