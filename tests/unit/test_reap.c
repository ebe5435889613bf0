/* Nobody left behind: the /proc/PID/stat parser on odd command names and malformed lines; the
 * descendant sweep on setsid'd and double-forked daemons and on a zombie leader whose threads
 * still run; sc_isolate_run leaving nothing behind when its child returns, crashes or hangs; the
 * bounded wait. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sc_isolate.h"
#include "sc_reap.h"
#include "sc_util.h"

static bool parse(const char *line, char *state, pid_t *ppid, pid_t *pgrp)
{
    return sc_proc_stat_parse(line, strlen(line), state, ppid, pgrp);
}

static void test_stat_parse(void **state)
{
    (void)state;
    char s;
    pid_t ppid, pgrp;
    assert_true(parse("42 (sleep) S 7 42 42 0 -1 4194304", &s, &ppid, &pgrp));
    assert_true(s == 'S' && ppid == 7 && pgrp == 42);
    /* a name chosen to fool a parser that stops at the first ')' */
    assert_true(parse("43 (a) Z 1 1 (b) R 9 9 0", &s, &ppid, &pgrp));
    assert_true(s == 'R' && ppid == 9 && pgrp == 9);
    assert_true(parse("44 (x y\nz) t 1 44", &s, &ppid, &pgrp));
    assert_true(s == 't' && ppid == 1);
    assert_false(parse("45 (no close paren S 1 1", &s, &ppid, &pgrp));
    assert_false(parse("46 (cut) S 1", &s, &ppid, &pgrp));
    assert_false(parse("47 (cut)", &s, &ppid, &pgrp));
    assert_false(parse("48 (odd) 5 1 1", &s, &ppid, &pgrp));
    assert_false(parse("49 (neg) S -3 1", &s, &ppid, &pgrp));
    assert_false(parse("", &s, &ppid, &pgrp));
    /* not NUL-terminated: only n bytes are read */
    const char cut[] = "50 (p) S 12 50";
    assert_true(sc_proc_stat_parse(cut, strlen(cut) - 1, &s, &ppid, &pgrp));
    assert_int_equal(pgrp, 5);
}

/* The state letter of pid from /proc, or 0 when it is gone. */
static char proc_state(pid_t pid)
{
    char path[64], text[512], s;
    pid_t ppid, pgrp;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof text);
    close(fd);
    return n > 0 && sc_proc_stat_parse(text, (size_t)n, &s, &ppid, &pgrp) ? s : 0;
}

/* True when pid is running (not a zombie). */
static bool running(pid_t pid)
{
    char s = proc_state(pid);
    return s && s != 'Z' && s != 'X';
}

/* A daemon's life: its pid on fd, a byte on ready, then sleep. */
static void daemon_main(int fd, int ready)
{
    pid_t pid = getpid();
    if (write(fd, &pid, sizeof pid) != sizeof pid || write(ready, "", 1) != 1)
        _exit(1);
    for (;;)
        pause();
}

/* Starts the two daemon shapes, each writing its pid on fd, and returns once both have: one
 * setsid()s and stays a child, one setsid()s in a child that exits at once (a double fork), so it
 * is orphaned. */
static void start_daemons(int fd)
{
    int ready[2];
    char two[2];
    assert_int_equal(pipe(ready), 0);
    if (fork() == 0) {
        setsid();
        daemon_main(fd, ready[1]);
    }
    pid_t middle = fork();
    if (middle == 0) {
        setsid();
        if (fork() == 0)
            daemon_main(fd, ready[1]);
        _exit(0);
    }
    waitpid(middle, NULL, 0);
    close(ready[1]);
    assert_int_equal(read(ready[0], two, 1) + read(ready[0], two + 1, 1), 2);
    close(ready[0]);
}

static void read_pids(int fd, pid_t *pids, int n)
{
    for (int i = 0; i < n; i++)
        assert_int_equal(read(fd, &pids[i], sizeof pids[i]), sizeof pids[i]);
}

static void assert_gone(const pid_t *pids, int n)
{
    for (int i = 0; i < n; i++)
        assert_false(running(pids[i]));
}

static void test_descendants_are_killed(void **state)
{
    (void)state;
    int p[2];
    pid_t pids[2];
    assert_int_equal(sc_reap_subreaper(), 0);
    assert_int_equal(pipe(p), 0);
    start_daemons(p[1]);
    close(p[1]);
    read_pids(p[0], pids, 2);
    assert_true(running(pids[0]) && running(pids[1]));
    assert_int_equal(sc_reap_descendants(), 2);
    assert_gone(pids, 2);
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1); /* every one reaped */
    assert_int_equal(errno, ECHILD);
    assert_int_equal(sc_reap_descendants(), 0);
    close(p[0]);
}

static int daemon_fd; /* the write end the isolated children report their daemons' pids on */

static cJSON *child_returns(void *arg)
{
    (void)arg;
    start_daemons(daemon_fd);
    return cJSON_CreateObject();
}

static cJSON *child_crashes(void *arg)
{
    (void)arg;
    start_daemons(daemon_fd);
    raise(SIGSEGV);
    return NULL;
}

static cJSON *child_hangs(void *arg)
{
    (void)arg;
    start_daemons(daemon_fd);
    sleep(600); /* far past the deadline */
    return NULL;
}

static void test_isolate_leaves_nothing(void **state)
{
    (void)state;
    static const sc_isolated_fn fns[] = {child_returns, child_crashes, child_hangs};
    static const sc_isolate_outcome outcomes[] = {SC_ISOLATE_OK, SC_ISOLATE_CRASH,
                                                  SC_ISOLATE_TIMEOUT};
    for (int i = 0; i < 3; i++) {
        int p[2];
        pid_t pids[2];
        sc_isolate_report rep;
        assert_int_equal(pipe(p), 0);
        daemon_fd = p[1];
        double start = sc_now_ms();
        assert_int_equal(sc_isolate_run(fns[i], NULL, 2, &rep), 0);
        assert_int_equal(rep.outcome, outcomes[i]);
        assert_true(sc_now_ms() - start < 10000); /* the daemons hold its pipes: no wait on them */
        close(p[1]);
        read_pids(p[0], pids, 2);
        assert_gone(pids, 2);
        cJSON_Delete(rep.result);
        close(p[0]);
    }
}

static void *sleep_forever(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

/* A process whose main thread called pthread_exit() shows as a zombie while its other threads
 * run: the sweep must kill it all the same. */
static void test_zombie_leader_with_live_threads(void **state)
{
    (void)state;
    assert_int_equal(sc_reap_subreaper(), 0);
    pid_t pid = fork();
    if (pid == 0) {
        pthread_t t;
        pthread_create(&t, NULL, sleep_forever, NULL);
        pthread_exit(NULL);
    }
    double end = sc_now_ms() + 5000;
    while (proc_state(pid) != 'Z' && sc_now_ms() < end)
        usleep(1000);
    assert_int_equal(proc_state(pid), 'Z');
    sc_reap_descendants();
    end = sc_now_ms() + 5000;
    while (kill(pid, 0) == 0 && sc_now_ms() < end) {
        waitpid(pid, NULL, WNOHANG);
        usleep(1000);
    }
    assert_int_equal(kill(pid, 0), -1); /* dead and reaped, its thread too */
}

static void test_bounded_wait(void **state)
{
    (void)state;
    pid_t pid = fork();
    if (pid == 0) {
        for (;;)
            pause();
    }
    int status = 0;
    double start = sc_now_ms();
    assert_false(sc_reap_wait(pid, &status, sc_now_ms() + 100));
    assert_true(sc_now_ms() - start < 5000);
    kill(pid, SIGKILL);
    assert_true(sc_reap_wait(pid, &status, sc_now_ms() + 5000));
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_false(sc_reap_wait(pid, &status, sc_now_ms() + 100)); /* not a child any more */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stat_parse),
        cmocka_unit_test(test_descendants_are_killed),
        cmocka_unit_test(test_isolate_leaves_nothing),
        cmocka_unit_test(test_zombie_leader_with_live_threads),
        cmocka_unit_test(test_bounded_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
