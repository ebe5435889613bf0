/* The output writer: a new file and a replaced one (mode kept, umask honoured), symlinks written
 * through (chains, dangling, loops), a private character device, a FIFO with and without a reader,
 * a Unix socket, /proc magic links to our descriptors (a pipe, a file, a socket, a closed reader),
 * directories, and stale temporaries (ours removed, a planted link left alone). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sc_output.h"

static char dir[] = "/tmp/sc-output-XXXXXX";

static const char *at(const char *name)
{
    static char path[4][512];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", dir, name);
    return p;
}

static void put(const char *name, const char *text)
{
    FILE *f = fopen(at(name), "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void expect_text(const char *name, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(at(name), "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_string_equal(buf, text);
}

static int write_text(const char *path, const char *text, sc_error *err)
{
    return sc_output_write(path, text, strlen(text), err);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_new_and_replaced_regular_files(void **state)
{
    (void)state;
    sc_error err = {0};
    struct stat st;
    mode_t old = umask(027);
    assert_int_equal(write_text(at("new.json"), "one\n", &err), 0);
    umask(old);
    expect_text("new.json", "one\n");
    assert_int_equal(stat(at("new.json"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640); /* 0644 less the umask */
    assert_int_equal(chmod(at("new.json"), 0600), 0);
    ino_t before = st.st_ino;
    assert_int_equal(write_text(at("new.json"), "two\n", &err), 0);
    expect_text("new.json", "two\n");
    assert_int_equal(stat(at("new.json"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600); /* the existing file's mode is kept */
    assert_true(st.st_ino != before);          /* replaced by rename, not rewritten */
}

static void test_symlinks_are_written_through(void **state)
{
    (void)state;
    sc_error err = {0};
    struct stat st;
    assert_int_equal(symlink("sub/target.json", at("dangling")), 0);
    assert_int_equal(mkdir(at("sub"), 0755), 0);
    assert_int_equal(write_text(at("dangling"), "made\n", &err), 0);
    assert_int_equal(lstat(at("dangling"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    expect_text("sub/target.json", "made\n");
    assert_int_equal(symlink("dangling", at("chain")), 0); /* a link to a link */
    assert_int_equal(write_text(at("chain"), "again\n", &err), 0);
    assert_int_equal(lstat(at("chain"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    expect_text("sub/target.json", "again\n");
    assert_int_equal(symlink("loop-b", at("loop-a")), 0);
    assert_int_equal(symlink("loop-a", at("loop-b")), 0);
    assert_int_equal(write_text(at("loop-a"), "x", &err), -ELOOP);
}

static void test_character_device_is_written_not_replaced(void **state)
{
    (void)state;
    if (mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) < 0)
        skip(); /* needs CAP_MKNOD */
    sc_error err = {0};
    struct stat st;
    assert_int_equal(write_text(at("null"), "{}\n", &err), 0);
    assert_int_equal(lstat(at("null"), &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(st.st_rdev, makedev(1, 3));
}

static void test_fifo_with_and_without_a_reader(void **state)
{
    (void)state;
    sc_error err = {0};
    assert_int_equal(mkfifo(at("fifo"), 0644), 0);
    assert_int_equal(write_text(at("fifo"), "lost\n", &err), -ENXIO);
    assert_non_null(strstr(err.message, "no reader on FIFO"));
    int r = open(at("fifo"), O_RDONLY | O_NONBLOCK);
    assert_true(r >= 0);
    assert_int_equal(write_text(at("fifo"), "through\n", &err), 0);
    char buf[32] = "";
    assert_int_equal(read(r, buf, sizeof buf - 1), 8);
    assert_string_equal(buf, "through\n");
    close(r);
    struct stat st;
    assert_int_equal(lstat(at("fifo"), &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
}

static void test_unix_socket_is_connected(void **state)
{
    (void)state;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", at("sock"));
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(s, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_int_equal(listen(s, 1), 0);
    sc_error err = {0};
    assert_int_equal(write_text(at("sock"), "sent\n", &err), 0); /* fits the backlog's buffer */
    int c = accept(s, NULL, NULL);
    char buf[32] = "";
    assert_int_equal(read(c, buf, sizeof buf - 1), 5);
    assert_string_equal(buf, "sent\n");
    close(c);
    close(s);
}

static void test_proc_magic_links(void **state)
{
    (void)state;
    sc_error err = {0};
    int p[2];
    char path[64], buf[32] = "";
    assert_int_equal(pipe(p), 0);
    snprintf(path, sizeof path, "/proc/self/fd/%d", p[1]);
    assert_int_equal(write_text(path, "piped\n", &err), 0);
    assert_int_equal(read(p[0], buf, sizeof buf - 1), 6);
    close(p[0]);
    assert_int_equal(write_text(path, "nobody\n", &err), -EPIPE); /* an error, not SIGPIPE */
    close(p[1]);
    int fd = open(at("opened"), O_WRONLY | O_CREAT | O_TRUNC, 0644); /* as a shell's > */
    assert_int_equal(write(fd, "report\n", 7), 7);
    struct stat before, after;
    fstat(fd, &before);
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    assert_int_equal(write_text(path, "json\n", &err), 0);
    close(fd);
    expect_text("opened", "report\njson\n"); /* written at the descriptor's offset, not renamed */
    assert_int_equal(stat(at("opened"), &after), 0);
    assert_int_equal(after.st_ino, before.st_ino);
}

/* A socket as standard output (a service's journal): written through the descriptor. */
static void test_own_socket_descriptor(void **state)
{
    (void)state;
    int sv[2];
    char path[64], buf[32] = "";
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    snprintf(path, sizeof path, "/proc/self/fd/%d", sv[0]);
    sc_error err = {0};
    assert_int_equal(write_text(path, "journal\n", &err), 0);
    assert_int_equal(read(sv[1], buf, sizeof buf - 1), 8);
    assert_string_equal(buf, "journal\n");
    close(sv[0]);
    close(sv[1]);
}

static void test_directory_is_an_error(void **state)
{
    (void)state;
    sc_error err = {0};
    assert_int_equal(mkdir(at("d"), 0755), 0);
    assert_int_equal(write_text(at("d"), "x", &err), -EISDIR);
    assert_non_null(strstr(err.message, "directory"));
}

static void test_stale_temporaries(void **state)
{
    (void)state;
    sc_error err = {0};
    put("victim", "precious\n");
    put(".s.json.stackcheck-0123456789abcdef", "old\n");
    put(".s.json.stackcheck-fedcba9876543210", "recent\n");
    assert_int_equal(symlink(at("victim"), at(".s.json.stackcheck-00000000000000aa")), 0);
    struct timespec times[2] = {{time(NULL) - 2 * SC_OUTPUT_STALE_SECONDS, 0},
                                {time(NULL) - 2 * SC_OUTPUT_STALE_SECONDS, 0}};
    utimensat(AT_FDCWD, at(".s.json.stackcheck-0123456789abcdef"), times, 0);
    utimensat(AT_FDCWD, at(".s.json.stackcheck-00000000000000aa"), times, AT_SYMLINK_NOFOLLOW);
    assert_int_equal(write_text(at("s.json"), "new\n", &err), 0);
    struct stat st;
    assert_int_equal(lstat(at(".s.json.stackcheck-0123456789abcdef"), &st), -1); /* removed */
    assert_int_equal(lstat(at(".s.json.stackcheck-fedcba9876543210"), &st), 0);  /* recent */
    assert_int_equal(lstat(at(".s.json.stackcheck-00000000000000aa"), &st), 0);  /* a link */
    expect_text("victim", "precious\n");
    expect_text("s.json", "new\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_and_replaced_regular_files),
        cmocka_unit_test(test_symlinks_are_written_through),
        cmocka_unit_test(test_character_device_is_written_not_replaced),
        cmocka_unit_test(test_fifo_with_and_without_a_reader),
        cmocka_unit_test(test_unix_socket_is_connected),
        cmocka_unit_test(test_proc_magic_links),
        cmocka_unit_test(test_own_socket_descriptor),
        cmocka_unit_test(test_directory_is_an_error),
        cmocka_unit_test(test_stale_temporaries),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
