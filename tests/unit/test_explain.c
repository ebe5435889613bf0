/* `stackcheck explain TEXT`: every signature of the table matches its own example, maps to
 * documented findings and is listed in docs/explain.md; short codes need their API's name;
 * fallbacks give way to specific signatures; a long hostile text is read within a budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <errno.h>

#include "sc_explain.h"
#include "sc_findings_doc.h"

typedef struct {
    const sc_error_signature *want;
    int seen;
    int total;
} match_log;

static void log_match(const sc_error_signature *sig, void *arg)
{
    match_log *log = arg;
    log->total++;
    if (sig == log->want)
        log->seen++;
}

static int count_matches(const char *text)
{
    match_log log = {0};
    return sc_explain_each_match(text, log_match, &log);
}

static char *read_docs_page(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/explain.md", getenv("SC_SOURCE_DIR"));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char page[1 << 17];
    size_t n = fread(page, 1, sizeof page - 1, f);
    page[n] = '\0';
    fclose(f);
    return page;
}

static void assert_findings_documented(const sc_error_signature *sig)
{
    char ids[512], severity[16], line[400];
    snprintf(ids, sizeof ids, "%s", sig->findings);
    int n = 0;
    char *save = NULL;
    for (char *id = strtok_r(ids, " ", &save); id; id = strtok_r(NULL, " ", &save), n++) {
        if (sc_findings_summary(id, severity, sizeof severity, line, sizeof line) != 0)
            fail_msg("signature '%s': finding %s is not documented", sig->example, id);
        assert_true(strlen(line) > 10);
    }
    assert_true(n >= 1);
}

/* Each key of the signature appears on the docs page (phrases and names as written). */
static void assert_listed(const char *page, const sc_error_signature *sig)
{
    const char *keys[] = {sig->name, sig->code, sig->phrase};
    for (size_t i = 0; i < 3; i++)
        if (keys[i] && !strstr(page, keys[i]))
            fail_msg("docs/explain.md does not list '%s'", keys[i]);
}

static void test_every_signature_matches_its_example(void **state)
{
    (void)state;
    const char *page = read_docs_page();
    int count = 0;
    for (const sc_error_signature *s = sc_error_signatures; s->family; s++, count++) {
        assert_non_null(s->example);
        assert_true(s->name || s->code || s->phrase);
        assert_non_null(s->meaning);
        assert_non_null(strstr(s->check, "stackcheck"));
        if (!sc_explain_matches(s, s->example))
            fail_msg("signature of '%s' does not match its example", s->example);
        match_log log = {.want = s};
        sc_explain_each_match(s->example, log_match, &log);
        if (log.seen != 1)
            fail_msg("explain '%s' does not show its signature", s->example);
        assert_findings_documented(s);
        assert_listed(page, s);
    }
    assert_true(count >= 50);
}

static const sc_error_signature *find_by_name(const char *name)
{
    for (const sc_error_signature *s = sc_error_signatures; s->family; s++)
        if (s->name && strcmp(s->name, name) == 0)
            return s;
    fail_msg("no signature %s", name);
    return NULL;
}

static void test_short_codes_need_their_api(void **state)
{
    (void)state;
    const sc_error_signature *hip = find_by_name("hipErrorNoDevice");
    const sc_error_signature *cu = find_by_name("CUDA_ERROR_NO_DEVICE");
    assert_true(sc_explain_matches(hip, " 100\n"));
    assert_true(sc_explain_matches(cu, "100"));
    assert_true(sc_explain_matches(hip, "HIP error code 100"));
    assert_false(sc_explain_matches(cu, "HIP error code 100"));
    assert_true(sc_explain_matches(cu, "cuInit returned 100 (cuda)"));
    assert_false(sc_explain_matches(hip, "error 100"));
    assert_false(sc_explain_matches(hip, "hip error 1000"));
    assert_int_equal(count_matches("error 100 on line 100"), 0);
    /* Distinctive codes count anywhere, as whole words only. */
    const sc_error_signature *dev = find_by_name("ACL_ERROR_RT_DEV_SETUP_ERROR");
    assert_true(sc_explain_matches(dev, "error code is 507033."));
    assert_false(sc_explain_matches(dev, "error code is 5070331"));
    const sc_error_signature *inner = find_by_name("DCMI_ERR_CODE_INNER_ERR");
    assert_true(sc_explain_matches(inner, "ret=-8005"));
    assert_false(sc_explain_matches(inner, "ret=8005"));
}

static void test_names_and_phrases(void **state)
{
    (void)state;
    const sc_error_signature *nb = find_by_name("hipErrorNoBinaryForGpu");
    assert_true(sc_explain_matches(nb, "HIPERRORNOBINARYFORGPU"));
    assert_false(sc_explain_matches(nb, "hipErrorNoBinaryForGpuX"));
    assert_true(sc_explain_matches(nb, "x\nunable to find CODE OBJECT for all current devices!\n"));
    /* A phrase's parts must be on one line. */
    assert_int_equal(count_matches("libstdc++.so.6: version `GLIBCXX_3.4.30'\nnot found"), 0);
    assert_int_equal(count_matches("libstdc++.so.6: version `GLIBCXX_3.4.30' not found"), 1);
}

static void test_fallbacks_give_way(void **state)
{
    (void)state;
    /* The HIP runtime's own signature, not the generic loader one. */
    match_log log = {.want = find_by_name("hipErrorNoDevice")};
    assert_int_equal(count_matches("ImportError: libamdhip64.so.6: cannot open shared object file"),
                     1);
    assert_int_equal(count_matches("libmpi.so.40: cannot open shared object file"), 1);
    /* A known CANN code hides the generic one; an unknown one gets it. */
    assert_int_equal(count_matches("EI0006: Getting socket times out."), 1);
    assert_int_equal(count_matches("EZ1234"), 1);
    sc_explain_each_match("EE1001 and ret -8005", log_match, &log);
    assert_int_equal(log.total, 2);
}

static void test_hostile_text_is_bounded(void **state)
{
    (void)state;
    size_t n = 4 << 20;
    char *text = malloc(n + 1);
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        text[i] = "version `a"[i % 10];
    text[n] = '\0';
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(count_matches(text), 0);
    memset(text, 'a', n); /* one endless word */
    assert_int_equal(count_matches(text), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 30);
    assert_int_equal(count_matches(""), 0);
    free(text);
}

static void test_finding_summary(void **state)
{
    (void)state;
    char severity[16], line[400];
    assert_int_equal(sc_findings_summary("hip.insufficient-driver", severity, sizeof severity, line,
                                         sizeof line),
                     0);
    assert_string_equal(severity, "error");
    assert_string_equal(line, "hipInit returned hipErrorInsufficientDriver: the kernel driver is "
                              "older than this runtime needs.");
    char small[12];
    assert_int_equal(sc_findings_summary("driver.no-accelerator", severity, sizeof severity, small,
                                         sizeof small),
                     0);
    assert_string_equal(small, "No supporte");
    assert_int_equal(
        sc_findings_summary("no.such-id", severity, sizeof severity, line, sizeof line), -ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_signature_matches_its_example),
        cmocka_unit_test(test_short_codes_need_their_api),
        cmocka_unit_test(test_names_and_phrases),
        cmocka_unit_test(test_fallbacks_give_way),
        cmocka_unit_test(test_hostile_text_is_bounded),
        cmocka_unit_test(test_finding_summary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
