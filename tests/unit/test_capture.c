/* The capture's parts that need no run: its redaction door (files never captured, account files
 * reduced, text scrubbed, binaries kept), the archive's name cleaning, and the tar writer and
 * reader together (long names through pax, link targets, data, refusals with a reason). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sc_redact.h"
#include "sc_tar.h"

static void test_denied_files(void **state)
{
    (void)state;
    static const char *const denied[] = {"/etc/shadow",
                                         "/etc/gshadow-",
                                         "/etc/sudoers.d/ops",
                                         "/proc/1234/environ",
                                         "/root/.ssh/id_ed25519",
                                         "/home/a/.docker/config.json",
                                         "/etc/ssl/private/host.key",
                                         "/root/.netrc"};
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++)
        assert_true(sc_redact_capture_denied(denied[i]));
    assert_false(sc_redact_capture_denied("/etc/passwd"));
    assert_false(sc_redact_capture_denied("/sys/class/kfd/kfd/topology/nodes/1/properties"));
    assert_false(sc_redact_capture_denied("/opt/rocm/.info/version"));
}

static char *door(const char *path, const char *data, size_t n, const unsigned *keep, size_t nkeep,
                  int *rc)
{
    char *out = NULL;
    size_t len = 0;
    *rc = sc_redact_capture(path, data, n, keep, nkeep, &out, &len);
    if (out)
        assert_int_equal(strlen(out), len);
    return out;
}

static void test_accounts_reduced(void **state)
{
    (void)state;
    const char passwd[] = "root:x:0:0:root:/root:/bin/bash\n"
                          "alice:$6$salt$hash:1000:1000:Alice Liddell:/home/alice:/bin/zsh\n"
                          "render-user:x:1500:109:GPU job user:/srv/job:/bin/sh\n"
                          "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
                          "broken line without fields\n";
    unsigned keep[] = {1500};
    int rc;
    char *out = door("/etc/passwd", passwd, strlen(passwd), keep, 1, &rc);
    assert_int_equal(rc, 1);
    assert_string_equal(out, "root:x:0:0:::\nrender-user:x:1500:109:::\nnobody:x:65534:65534:::\n");
    free(out);
    const char group[] = "root:x:0:\nvideo:x:44:alice,bob\nrender:x:109:alice\nalice:x:1000:\n";
    out = door("/etc/group", group, strlen(group), NULL, 0, &rc);
    assert_int_equal(rc, 1);
    assert_string_equal(out, "root:x:0:\nvideo:x:44:\nrender:x:109:\n");
    free(out);
}

static void test_text_scrubbed_binary_kept(void **state)
{
    (void)state;
    const char text[] = "deb https://builder:s3cr3tpass@mirror.example/debian bookworm main\n";
    int rc;
    char *out = door("/etc/apt/sources.list", text, strlen(text), NULL, 0, &rc);
    assert_int_equal(rc, 1);
    assert_null(strstr(out, "s3cr3tpass"));
    assert_non_null(strstr(out, "mirror.example"));
    free(out);
    const char elf[] = "\x7f"
                       "ELF\x02\x01\x01\0https://u:p@x.example";
    out = door("/usr/lib/libx.so", elf, sizeof elf - 1, NULL, 0, &rc);
    assert_int_equal(rc, 0); /* kept as it is: a replay parses it */
    assert_null(out);
}

static void test_clean_path(void **state)
{
    (void)state;
    char out[PATH_MAX];
    assert_int_equal(sc_tar_clean_path("./etc//os-release", out), 0);
    assert_string_equal(out, "etc/os-release");
    assert_int_equal(sc_tar_clean_path("./", out), 0);
    assert_string_equal(out, "");
    assert_int_equal(sc_tar_clean_path("/etc/passwd", out), -EINVAL);
    assert_int_equal(sc_tar_clean_path("a/../../b", out), -EINVAL);
    assert_int_equal(sc_tar_clean_path("..", out), -EINVAL);
    char deep[SC_TAR_MAX_DEPTH * 2 + 8] = "";
    for (int i = 0; i <= SC_TAR_MAX_DEPTH; i++)
        strcat(deep, "d/");
    assert_int_equal(sc_tar_clean_path(deep, out), -EINVAL);
}

static void test_round_trip(void **state)
{
    (void)state;
    char longname[300], target[200];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    longname[100] = '/';
    memset(target, 't', sizeof target - 1);
    target[sizeof target - 1] = '\0';
    sc_tar_writer w;
    assert_int_equal(sc_tar_writer_init(&w, 6, 1700000000), 0);
    assert_int_equal(sc_tar_add(&w, SC_TAR_DIR, "etc", 0755, NULL, NULL, 0), 0);
    assert_int_equal(sc_tar_add(&w, SC_TAR_FILE, "etc/os-release", 0644, NULL, "ID=x\n", 5), 0);
    assert_int_equal(sc_tar_add(&w, SC_TAR_FILE, longname, 0644, NULL, "1", 1), 0);
    assert_int_equal(sc_tar_add(&w, SC_TAR_LINK, "opt/rocm", 0777, target, NULL, 0), 0);
    sc_buf archive;
    assert_int_equal(sc_tar_finish(&w, &archive), 0);
    sc_tar_writer_free(&w);

    sc_tar_mem m = {archive.data, archive.len, 0};
    sc_tar_reader *r = sc_tar_reader_new(sc_tar_mem_read, &m);
    static sc_tar_entry e;
    sc_error err = {0};
    char buf[16] = "";
    assert_int_equal(sc_tar_next(r, &e, &err), 1);
    assert_int_equal(e.type, SC_TAR_DIR);
    assert_string_equal(e.path, "etc");
    assert_int_equal(sc_tar_next(r, &e, &err), 1);
    assert_string_equal(e.path, "etc/os-release");
    assert_int_equal(sc_tar_read(r, buf, sizeof buf), 5);
    assert_memory_equal(buf, "ID=x\n", 5);
    assert_int_equal(sc_tar_next(r, &e, &err), 1);
    assert_string_equal(e.path, longname); /* through the pax header */
    assert_int_equal(e.size, 1);
    assert_int_equal(sc_tar_next(r, &e, &err), 1); /* the data left unread is skipped */
    assert_int_equal(e.type, SC_TAR_LINK);
    assert_string_equal(e.target, target);
    assert_int_equal(sc_tar_next(r, &e, &err), 0);
    sc_tar_reader_free(r);

    m = (sc_tar_mem){archive.data, archive.len / 2, 0}; /* cut in the middle */
    r = sc_tar_reader_new(sc_tar_mem_read, &m);
    int rc;
    while ((rc = sc_tar_next(r, &e, &err)) == 1)
        ;
    assert_true(rc < 0);
    assert_true(strstr(err.message, "corrupt") || strstr(err.message, "truncated"));
    sc_tar_reader_free(r);
    sc_buf_free(&archive);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_denied_files),
        cmocka_unit_test(test_accounts_reduced),
        cmocka_unit_test(test_text_scrubbed_binary_kept),
        cmocka_unit_test(test_clean_path),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
