/* log.h — daemon logging: the journal with structured fields under systemd, stderr otherwise. */
#pragma once

#include <syslog.h>

/* Decide the sink once at start-up (JOURNAL_STREAM set means stderr is the journal). */
void log_open(void);

/* Log a message with optional structured fields. `fields` is NULL or a
 * NULL-terminated list of "KEY=value" strings (SENSOR=, TEMP_C=, RUN_ID=,
 * ALERT=); on stderr they are appended in brackets. */
void log_fields(int priority, const char *const *fields, const char *format, ...)
        __attribute__((format(printf, 3, 4)));

#define log_error(...)   log_fields(LOG_ERR, NULL, __VA_ARGS__)
#define log_warning(...) log_fields(LOG_WARNING, NULL, __VA_ARGS__)
#define log_notice(...)  log_fields(LOG_NOTICE, NULL, __VA_ARGS__)
#define log_info(...)    log_fields(LOG_INFO, NULL, __VA_ARGS__)
#define log_debug(...)   log_fields(LOG_DEBUG, NULL, __VA_ARGS__)
