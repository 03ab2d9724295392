/* test-stress.c — unit tests for runs/stress and its load drivers: work counters, duty cycle, affinity, stop, io fallback, command groups, parent death. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "stress.h"
#include "test-util.h"

/* Orphans of command loads and of the parent-death tests come to us to be
 * reaped. qemu-user refuses PR_SET_CHILD_SUBREAPER: there they go to init,
 * on its schedule, and the parent-death tests cannot run. */
static bool have_subreaper;

static uint64_t mono_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Contents of /proc/<pid>/stat after the ")" closing comm, or NULL. */
static char *proc_stat_tail(pid_t pid, char *buf, size_t n) {
        char path[64];
        FILE *f;
        size_t len;

        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return NULL;
        len = fread(buf, 1, n - 1, f);
        fclose(f);
        buf[len] = '\0';
        char *p = strrchr(buf, ')');
        return p ? p + 2 : NULL;
}

/* utime + stime in clock ticks. */
static uint64_t proc_cpu_ticks(pid_t pid) {
        char buf[1024], *p = proc_stat_tail(pid, buf, sizeof buf);
        unsigned long long ut, st;

        assert_non_null(p);
        /* fields 3..15: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
        assert_int_equal(sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st), 2);
        return ut + st;
}

/* Gone: no /proc entry, or a zombie (which we reap if it is our child: we are a subreaper). */
static bool proc_gone(pid_t pid) {
        char buf[1024], *p = proc_stat_tail(pid, buf, sizeof buf);

        if (!p)
                return true;
        if (*p == 'Z' || *p == 'X') {
                (void) waitpid(pid, NULL, WNOHANG);
                return true;
        }
        return false;
}

static bool procs_gone_within(const pid_t *pids, size_t n, unsigned ms) {
        uint64_t end = mono_ms() + ms;

        for (;;) {
                size_t gone = 0;
                for (size_t i = 0; i < n; i++)
                        gone += proc_gone(pids[i]);
                if (gone == n)
                        return true;
                if (mono_ms() >= end)
                        return false;
                sleep_ms(10);
        }
}

static bool group_gone_within(pid_t pgid, unsigned ms) {
        uint64_t end = mono_ms() + ms;

        while (!(kill(-pgid, 0) < 0 && errno == ESRCH)) {
                if (mono_ms() >= end)
                        return false;
                sleep_ms(10);
        }
        return true;
}

static void proc_cpus_allowed(pid_t pid, char *out, size_t n) {
        char path[64], line[256];
        FILE *f;

        snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        assert_non_null(f);
        out[0] = '\0';
        while (fgets(line, sizeof line, f))
                if (sscanf(line, "Cpus_allowed_list: %255s", out) == 1)
                        break;
        fclose(f);
        (void) n;
}

/* Waits for every worker to end by itself, feeding stress_child_exited() like the daemon's child sources. */
static void wait_exits(struct stress *s, unsigned ms) {
        uint64_t end = mono_ms() + ms;

        while (!stress_all_exited(s) && mono_ms() < end) {
                for (size_t i = 0; i < stress_n_pids(s); i++) {
                        siginfo_t si = {};
                        if (waitid(P_PID, (id_t) stress_pid(s, i), &si, WEXITED | WNOHANG) == 0 && si.si_pid > 0)
                                assert_int_equal(stress_child_exited(s, &si), 0);
                }
                sleep_ms(5);
        }
        assert_true(stress_all_exited(s));
}

struct cpu_result {
        uint64_t ops;           /* work done over the measured interval */
        uint64_t ticks;         /* CPU time of all workers over it, clock ticks */
        uint64_t ms;            /* the interval */
};

static void check_affinity(const struct stress *s) {
        cpu_set_t set;
        int cpus[CPU_SETSIZE], n = 0;
        char want[16], got[256];

        assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
        for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &set))
                        cpus[n++] = c;
        for (size_t i = 0; i < stress_n_pids(s); i++) {
                assert_int_equal(stress_cpu(s, i), cpus[i % (size_t) n]);
                snprintf(want, sizeof want, "%d", stress_cpu(s, i));
                proc_cpus_allowed(stress_pid(s, i), got, sizeof got);
                assert_string_equal(got, want);
        }
}

static void run_cpu(enum cpu_method method, unsigned duty, struct cpu_result *res) {
        struct stress_spec spec;
        struct stress *s;
        pid_t pids[2];
        uint64_t w0, w1, w2, t0 = 0, start;

        stress_spec_init(&spec, STRESS_CPU);
        spec.workers = 2;
        spec.method = method;
        spec.duty_pct = duty;
        assert_int_equal(stress_start(&spec, &s), 0);
        assert_int_equal(stress_n_pids(s), 2);
        assert_string_equal(stress_work_unit(s), "ops");
        check_affinity(s);
        sleep_ms(200);          /* batch sizes settle */
        for (size_t i = 0; i < 2; i++)
                t0 += proc_cpu_ticks(pids[i] = stress_pid(s, i));
        w0 = stress_work_done(s);
        start = mono_ms();
        sleep_ms(500);
        w1 = stress_work_done(s);
        sleep_ms(500);
        w2 = stress_work_done(s);
        res->ticks = proc_cpu_ticks(pids[0]) + proc_cpu_ticks(pids[1]) - t0;
        res->ms = mono_ms() - start;
        res->ops = w2 - w0;
        assert_true(w0 > 0 && w1 > w0 && w2 > w1);

        /* SIGTERM is enough, and they are all gone within 1 s. */
        assert_int_equal(stress_reap_blocking(s, 1000), 0);
        assert_true(procs_gone_within(pids, 2, 0));
        assert_false(stress_failed(s));
        stress_free(s);
}

static void check_duty(enum cpu_method method) {
        struct cpu_result full, part;

        run_cpu(method, 100, &full);
        run_cpu(method, 30, &part);
        print_message("%s: duty 100: %llu ops/s, %llu ticks; duty 30: %llu ops/s, %llu ticks\n",
                      cpu_method_to_string(method),
                      (unsigned long long) full.ops, (unsigned long long) full.ticks,
                      (unsigned long long) part.ops, (unsigned long long) part.ticks);
        /* At most about 30 % of the 2 workers' wall time, whatever else
         * runs on the machine. Clearly less than at 100 % too, which only
         * says something when the full-duty workers had at least half the
         * CPUs they asked for: on a machine busy with other builds they
         * may have got less than 30 % themselves. */
        uint64_t clk = (uint64_t) sysconf(_SC_CLK_TCK), capacity = 2 * part.ms * clk / 1000;
        assert_true(part.ticks * 100 <= capacity * 40);
        assert_true(part.ticks > 0);
        if (full.ticks * 2 >= 2 * full.ms * clk / 1000) {
                assert_true(part.ticks * 10 < full.ticks * 8);
                assert_true(part.ops * 10 < full.ops * 8);
        } else
                print_message("busy machine: the full-duty workers got %llu ticks of %llu, not compared\n",
                              (unsigned long long) full.ticks, (unsigned long long) (2 * full.ms * clk / 1000));
}

static void test_cpu_sqrt(void **state) {
        check_duty(CPU_METHOD_SQRT);
}

static void test_cpu_fma(void **state) {
        check_duty(CPU_METHOD_FMA);
}

static void test_cpu_matrix_and_default_workers(void **state) {
        struct stress_spec spec;
        struct stress *s;
        cpu_set_t set;

        stress_spec_init(&spec, STRESS_CPU);
        spec.method = CPU_METHOD_MATRIX;
        assert_int_equal(stress_start(&spec, &s), 0);
        assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
        assert_int_equal(stress_n_pids(s), (size_t) CPU_COUNT(&set));
        check_affinity(s);
        sleep_ms(300);
        uint64_t w = stress_work_done(s);
        sleep_ms(100);
        assert_true(w > 0 && stress_work_done(s) > w);
        assert_int_equal(stress_reap_blocking(s, 1000), 0);
        stress_free(s);
}

static void test_memory(void **state) {
        struct stress_spec spec;
        struct stress *s;

        stress_spec_init(&spec, STRESS_MEMORY);
        spec.workers = 1;
        spec.memory_bytes = 8u << 20;
        assert_int_equal(stress_start(&spec, &s), 0);
        assert_string_equal(stress_work_unit(s), "bytes");
        sleep_ms(400);
        uint64_t w = stress_work_done(s);
        print_message("memory: %llu MiB in 0.4 s\n", (unsigned long long) (w >> 20));
        assert_true(w >= spec.memory_bytes);    /* at least one full pass */
        assert_int_equal(stress_reap_blocking(s, 1000), 0);
        assert_false(stress_failed(s));
        stress_free(s);
}

/* Returns whether O_DIRECT was used. */
static bool run_io(const char *parent, bool buffered) {
        char dir[256];
        struct stress_spec spec;
        struct stress *s;
        bool direct;

        snprintf(dir, sizeof dir, "%s/test-stress-XXXXXX", parent);
        assert_non_null(mkdtemp(dir));
        stress_spec_init(&spec, STRESS_IO);
        spec.io_dir = dir;
        spec.io_file_bytes = 4u << 20;
        spec.io_buffered = buffered;
        assert_int_equal(stress_start(&spec, &s), 0);
        assert_int_equal(stress_n_pids(s), 1);
        assert_string_equal(stress_work_unit(s), "ios");
        assert_int_equal(dir_entries(dir), 0);  /* unlinked at once */
        /* The worker first lays the file out: give a slow card time. */
        uint64_t w = 0, start = mono_ms();
        for (sleep_ms(300); w == 0 && mono_ms() - start < 5000; sleep_ms(50))
                w = stress_work_done(s);
        direct = stress_io_direct(s);
        print_message("io on %s%s: %llu I/Os in %llu ms, %s\n", parent, buffered ? " (buffered)" : "",
                      (unsigned long long) w, (unsigned long long) (mono_ms() - start),
                      direct ? "O_DIRECT|O_DSYNC" : "O_DSYNC");
        assert_true(w > 0);
        assert_int_equal(stress_reap_blocking(s, 1000), 0);
        assert_false(stress_failed(s));
        stress_free(s);
        assert_int_equal(dir_entries(dir), 0);
        assert_int_equal(rmdir(dir), 0);
        return direct;
}

static void test_io_disk(void **state) {
        (void) run_io("/var/tmp", false);
}

static void test_io_tmpfs(void **state) {
        if (access("/dev/shm", W_OK) < 0)
                skip();
        (void) run_io("/dev/shm", false);
        assert_false(run_io("/dev/shm", true));
}

static void test_command_group(void **state) {
        char *argv[] = { (char *) "sh", (char *) "-c", (char *) "sleep 100 & sleep 100", NULL };
        struct stress_spec spec;
        struct stress *s;
        pid_t pgid = 0, sup;
        uint64_t end;

        stress_spec_init(&spec, STRESS_COMMAND);
        spec.argv = argv;
        assert_int_equal(stress_start(&spec, &s), 0);
        assert_int_equal(stress_n_pids(s), 1);
        assert_int_equal(stress_cpu(s, 0), -1);
        assert_string_equal(stress_work_unit(s), "none");
        sup = stress_pid(s, 0);
        for (end = mono_ms() + 1000; pgid == 0 && mono_ms() < end; sleep_ms(5))
                pgid = stress_command_pgid(s);
        assert_true(pgid > 0 && pgid != sup);
        sleep_ms(200);
        assert_int_equal(kill(-pgid, 0), 0);
        assert_int_equal(stress_work_done(s), 0);
        assert_int_equal(stress_reap_blocking(s, 3000), 0);
        assert_true(group_gone_within(pgid, 0));
        assert_false(stress_failed(s));
        stress_free(s);
}

/* A command ignoring SIGTERM: the supervisor escalates to SIGKILL after the grace. */
static void test_command_ignores_term(void **state) {
        char *argv[] = { (char *) "sh", (char *) "-c", (char *) "trap '' TERM; sleep 100 & sleep 100", NULL };
        struct stress_spec spec;
        struct stress *s;
        pid_t pgid = 0;
        uint64_t start, end;

        stress_spec_init(&spec, STRESS_COMMAND);
        spec.argv = argv;
        assert_int_equal(stress_start(&spec, &s), 0);
        for (end = mono_ms() + 1000; pgid == 0 && mono_ms() < end; sleep_ms(5))
                pgid = stress_command_pgid(s);
        assert_true(pgid > 0);
        sleep_ms(200);
        start = mono_ms();
        assert_int_equal(stress_reap_blocking(s, 3000), 0);
        assert_true(mono_ms() - start >= STRESS_STOP_GRACE_MS - 100);
        /* killed; without a subreaper the zombies are init's to reap, whenever it does */
        if (have_subreaper)
                assert_true(group_gone_within(pgid, 0));
        stress_free(s);
}

static void check_command_exit(const char *cmd, int want) {
        char *argv[] = { (char *) "sh", (char *) "-c", (char *) cmd, NULL };
        struct stress_spec spec;
        struct stress *s;
        int code, status;

        stress_spec_init(&spec, STRESS_COMMAND);
        spec.argv = argv;
        if (cmd[0] == '/')
                argv[0] = (char *) cmd, argv[1] = NULL;
        assert_int_equal(stress_start(&spec, &s), 0);
        wait_exits(s, 2000);
        assert_int_equal(stress_exit_status(s, 0, &code, &status), 0);
        assert_int_equal(code, CLD_EXITED);
        assert_int_equal(status, want);
        assert_true(stress_failed(s));
        stress_free(s);
}

static void test_command_exit_status(void **state) {
        check_command_exit("exit 3", 3);
        check_command_exit("kill -KILL $$", 128 + SIGKILL);
        check_command_exit("/nonexistent/heatcurve-test", 127);
}

static void test_free_kills(void **state) {
        struct stress_spec spec;
        struct stress *s;
        pid_t pid;

        stress_spec_init(&spec, STRESS_CPU);
        spec.workers = 1;
        assert_int_equal(stress_start(&spec, &s), 0);
        pid = stress_pid(s, 0);
        assert_int_equal(stress_stop(s), 0);
        assert_int_equal(stress_stop(s), 0);    /* idempotent */
        stress_free(s);
        assert_true(procs_gone_within(&pid, 1, 0));
}

/* A process starts a load and is killed with SIGKILL: the load must not survive it. */
static void check_parent_death(enum stress_type type) {
        char *argv[] = { (char *) "sh", (char *) "-c", (char *) "sleep 100 & sleep 100", NULL };
        pid_t pids[3] = {}, mid;        /* workers (or supervisor and pgid) */
        int p[2];

        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        mid = fork();
        assert_true(mid >= 0);
        if (mid == 0) {
                struct stress_spec spec;
                struct stress *s;

                stress_spec_init(&spec, type);
                spec.workers = type == STRESS_CPU ? 2 : 0;
                spec.argv = argv;
                if (stress_start(&spec, &s) < 0)
                        _exit(1);
                pids[0] = stress_pid(s, 0);
                pids[1] = type == STRESS_CPU ? stress_pid(s, 1) : 0;
                for (uint64_t end = mono_ms() + 1000; type == STRESS_COMMAND && pids[1] == 0 && mono_ms() < end; sleep_ms(5))
                        pids[1] = stress_command_pgid(s);
                if (write(p[1], pids, sizeof pids) != sizeof pids)
                        _exit(1);
                pause();
                _exit(0);
        }
        close(p[1]);
        assert_int_equal(read(p[0], pids, sizeof pids), sizeof pids);
        close(p[0]);
        assert_true(pids[0] > 0 && pids[1] > 0);
        sleep_ms(200);
        assert_int_equal(kill(mid, SIGKILL), 0);
        assert_int_equal(waitpid(mid, NULL, 0), mid);
        if (type == STRESS_CPU)
                assert_true(procs_gone_within(pids, 2, 2000));
        else {
                assert_true(group_gone_within(pids[1], 2000 + STRESS_STOP_GRACE_MS));
                assert_true(procs_gone_within(pids, 1, 1000));
        }
}

static void test_parent_death_cpu(void **state) {
        if (!have_subreaper)
                skip();
        check_parent_death(STRESS_CPU);
}

static void test_parent_death_command(void **state) {
        if (!have_subreaper)
                skip();
        check_parent_death(STRESS_COMMAND);
}

static void check_invalid(const struct stress_spec *spec, const char *field) {
        char err[256] = "";

        assert_int_equal(stress_spec_validate(spec, err, sizeof err), -EINVAL);
        print_message("  %s\n", err);
        assert_true(strncmp(err, field, strlen(field)) == 0 && err[strlen(field)] == ':');
}

static void test_validate_cpu(void **state) {
        struct stress_spec spec;
        struct stress *s;

        stress_spec_init(&spec, STRESS_CPU);
        assert_int_equal(stress_spec_validate(&spec, NULL, 0), 0);
        spec.workers = STRESS_WORKERS_MAX + 1;
        check_invalid(&spec, "load.workers");
        assert_int_equal(stress_start(&spec, &s), -EINVAL);
        stress_spec_init(&spec, STRESS_CPU);
        spec.duty_pct = 0;
        check_invalid(&spec, "load.duty");
        spec.duty_pct = 101;
        check_invalid(&spec, "load.duty");
        stress_spec_init(&spec, STRESS_CPU);
        spec.method = _CPU_METHOD_MAX;
        check_invalid(&spec, "load.method");
        spec.type = _STRESS_TYPE_MAX;
        check_invalid(&spec, "load.type");
}

static void test_validate_memory_io(void **state) {
        struct stress_spec spec;

        stress_spec_init(&spec, STRESS_MEMORY);
        spec.memory_bytes = STRESS_MEMORY_MAX + 1;
        check_invalid(&spec, "load.memory");
        spec.memory_bytes = 1000;
        check_invalid(&spec, "load.memory");

        stress_spec_init(&spec, STRESS_IO);
        check_invalid(&spec, "load.dir");
        spec.io_dir = "relative";
        check_invalid(&spec, "load.dir");
        spec.io_dir = "/nonexistent-heatcurve";
        check_invalid(&spec, "load.dir");
        spec.io_dir = "/etc/passwd";
        check_invalid(&spec, "load.dir");
        spec.io_dir = "/var/tmp";
        spec.io_file_bytes = (4u << 20) + 1;
        check_invalid(&spec, "load.file_size");
        spec.io_file_bytes = STRESS_IO_FILE_MAX * 2;
        check_invalid(&spec, "load.file_size");
}

static void test_validate_command(void **state) {
        char *argv[] = { (char *) "true", NULL }, *empty[] = { NULL };
        struct stress_spec spec;

        stress_spec_init(&spec, STRESS_COMMAND);
        check_invalid(&spec, "load.command");
        spec.argv = empty;
        check_invalid(&spec, "load.command");
        spec.argv = argv;
        assert_int_equal(stress_spec_validate(&spec, NULL, 0), 0);
        spec.workers = 2;
        check_invalid(&spec, "load.workers");
        spec.workers = 1;
        spec.duty_pct = 50;
        check_invalid(&spec, "load.duty");
}

static void test_names(void **state) {
        for (int t = 0; t < _STRESS_TYPE_MAX; t++)
                assert_int_equal(stress_type_from_string(stress_type_to_string(t)), t);
        for (int m = 0; m < _CPU_METHOD_MAX; m++)
                assert_int_equal(cpu_method_from_string(cpu_method_to_string(m)), m);
        assert_int_equal(stress_type_from_string("gpu"), -EINVAL);
        assert_int_equal(stress_type_from_string(NULL), -EINVAL);
        assert_int_equal(cpu_method_from_string("SQRT"), -EINVAL);
        assert_string_equal(cpu_method_to_string(CPU_METHOD_FMA), "fma");
        assert_null(stress_type_to_string(_STRESS_TYPE_MAX));
}

/* What the list of drivers answers for each type, and the names it lists. */
static void test_kinds(void **state) {
        struct stress_spec spec;
        char names[128], err[256];

        assert_int_equal(stress_type_names(names, sizeof names, " or "), strlen("cpu, memory, io or command"));
        assert_string_equal(names, "cpu, memory, io or command");
        stress_type_names(names, sizeof names, ", ");
        assert_string_equal(names, "cpu, memory, io, command");
        assert_int_equal(stress_type_names(names, 5, ", "), strlen("cpu, memory, io, command"));
        assert_string_equal(names, "cpu,");
        for (int t = 0; t <= _STRESS_TYPE_MAX; t++) {
                assert_int_equal(stress_type_runs_program(t), t == STRESS_COMMAND);
                assert_int_equal(stress_type_needs_dir(t), t == STRESS_IO);
                assert_int_equal(stress_type_cpu_bound(t), t == STRESS_CPU || t == STRESS_MEMORY);
        }
        stress_spec_init(&spec, _STRESS_TYPE_MAX);
        assert_int_equal(stress_spec_validate(&spec, err, sizeof err), -EINVAL);
        assert_string_equal(err, "load.type: must be cpu, memory, io or command");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_kinds),
                cmocka_unit_test(test_validate_cpu),
                cmocka_unit_test(test_validate_memory_io),
                cmocka_unit_test(test_validate_command),
                cmocka_unit_test(test_cpu_sqrt),
                cmocka_unit_test(test_cpu_fma),
                cmocka_unit_test(test_cpu_matrix_and_default_workers),
                cmocka_unit_test(test_memory),
                cmocka_unit_test(test_io_disk),
                cmocka_unit_test(test_io_tmpfs),
                cmocka_unit_test(test_command_group),
                cmocka_unit_test(test_command_ignores_term),
                cmocka_unit_test(test_command_exit_status),
                cmocka_unit_test(test_free_kills),
                cmocka_unit_test(test_parent_death_cpu),
                cmocka_unit_test(test_parent_death_command),
        };

        /* Orphans of the parent-death tests come to us, so we can reap them. */
        have_subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
        if (!have_subreaper)
                printf("PR_SET_CHILD_SUBREAPER: %s; skipping the parent-death tests\n", strerror(errno));
        return cmocka_run_group_tests(tests, NULL, NULL);
}
