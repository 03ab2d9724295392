/* log.c — daemon logging: the journal with structured fields under systemd, stderr otherwise. */
#include "log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#define LOG_FIELDS_MAX 8

static bool log_to_journal;

void log_open(void) {
        /* systemd sets JOURNAL_STREAM when stderr is connected to the journal. */
        log_to_journal = getenv("JOURNAL_STREAM") != NULL;
}

static void log_journal(int priority, const char *const *fields, const char *msg) {
        struct iovec iov[LOG_FIELDS_MAX + 3];
        char prio[16], message[1100];
        size_t n = 0;

        snprintf(prio, sizeof prio, "PRIORITY=%d", priority);
        snprintf(message, sizeof message, "MESSAGE=%s", msg);
        iov[n++] = (struct iovec) { message, strlen(message) };
        iov[n++] = (struct iovec) { prio, strlen(prio) };
        iov[n++] = (struct iovec) { (char *) "SYSLOG_IDENTIFIER=heatcurved", 28 };
        for (size_t i = 0; fields && fields[i] && i < LOG_FIELDS_MAX; i++)
                iov[n++] = (struct iovec) { (char *) fields[i], strlen(fields[i]) };
        if (sd_journal_sendv(iov, (int) n) < 0)
                fprintf(stderr, "%s\n", msg);
}

static void log_stderr(const char *const *fields, const char *msg) {
        fputs(msg, stderr);
        for (size_t i = 0; fields && fields[i] && i < LOG_FIELDS_MAX; i++)
                fprintf(stderr, "%s%s", i == 0 ? " [" : " ", fields[i]);
        fputs(fields && fields[0] ? "]\n" : "\n", stderr);
}

void log_fields(int priority, const char *const *fields, const char *format, ...) {
        char msg[1024];
        va_list ap;

        va_start(ap, format);
        vsnprintf(msg, sizeof msg, format, ap);
        va_end(ap);

        if (log_to_journal)
                log_journal(priority, fields, msg);
        else
                log_stderr(fields, msg);
}
