/* Text hygiene: UTF-8 validation and repair, cuts on character boundaries, and the terminal
 * escaping of C0, C1 and bidirectional controls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sc_text.h"

#define FFFD "\xef\xbf\xbd"

static void assert_clean(const char *in, size_t n, const char *expected)
{
    char *out = sc_utf8_clean(in, n);
    assert_non_null(out);
    assert_string_equal(out, expected);
    assert_true(sc_utf8_valid(out, strlen(out)));
    free(out);
}

static void test_utf8_validation(void **state)
{
    (void)state;
    const char *mixed = "plain \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
    assert_true(sc_utf8_valid(mixed, strlen(mixed)));
    assert_false(sc_utf8_valid("\xff\xfe", 2));
    assert_false(sc_utf8_valid("\xc0\xaf", 2));         /* overlong '/' */
    assert_false(sc_utf8_valid("\xed\xa0\x80", 3));     /* a surrogate */
    assert_false(sc_utf8_valid("\xf4\x90\x80\x80", 4)); /* above U+10FFFF */
    assert_false(sc_utf8_valid("\xe2\x82", 2));         /* a 3-byte character cut in half */
    assert_false(sc_utf8_valid("a\0b", 3));
    assert_false(sc_utf8_valid("\xef\xbf\xbf", 3)); /* U+FFFF: no character, not in XML */
    assert_true(sc_utf8_valid("\xef\xbf\xbd", 3));  /* U+FFFD */
    assert_int_equal(sc_utf8_seq_len("\xe2\x82\xac", 2), 0);
}

static void test_clean_replaces_each_invalid_byte(void **state)
{
    (void)state;
    assert_clean("ok", 2, "ok");
    assert_clean("\xff\xfe", 2, FFFD FFFD);
    assert_clean("x\xe2\x82", 3, "x" FFFD FFFD);
    assert_clean("a\0b", 3, "a" FFFD "b");
    assert_clean("\x9b"
                 "31m",
                 4, FFFD "31m");             /* a raw 8-bit CSI is no character */
    assert_clean("\xc2\x9b", 2, "\xc2\x9b"); /* U+009B is valid UTF-8: escaped only on output */
}

static void test_cuts_fall_on_boundaries(void **state)
{
    (void)state;
    const char *s = "ab\xe2\x82\xac"
                    "cd"; /* a, b, euro sign, c, d */
    assert_int_equal(sc_utf8_prefix(s, 7, 4), 2);
    assert_int_equal(sc_utf8_prefix(s, 7, 5), 5);
    assert_int_equal(sc_utf8_prefix(s, 7, 100), 7);
    assert_int_equal(sc_utf8_suffix_start(s, 7, 4), 5);
    assert_int_equal(sc_utf8_suffix_start(s, 7, 5), 2);
    assert_int_equal(sc_utf8_suffix_start(s, 7, 100), 0);
    assert_int_equal(sc_utf8_prec(s, 3), 2);
    char buf[5];
    sc_text_copy(buf, sizeof buf, s);
    assert_string_equal(buf, "ab");
    sc_text_copy(buf, sizeof buf, "abcdefgh");
    assert_string_equal(buf, "abcd");
    /* invalid input is cut at the byte count: there is no character to keep whole */
    assert_int_equal(sc_utf8_prefix("\xff\xff\xff\xff", 4, 2), 2);
}

/* What sc_term_print writes for s (at most max bytes of it). */
static char *term(const char *s, size_t max)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sc_term_print(f, s, max);
    fclose(f);
    return buf;
}

static void assert_term(const char *in, const char *expected)
{
    char *out = term(in, (size_t)-1);
    assert_string_equal(out, expected);
    free(out);
}

static void test_terminal_escapes(void **state)
{
    (void)state;
    assert_term("plain caf\xc3\xa9", "plain caf\xc3\xa9");
    assert_term("a\nb\tc", "a\\nb\\tc");
    assert_term("\x1b[31mred\x07", "\\x1b[31mred\\x07");
    assert_term("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"); /* OSC 52: the clipboard */
    assert_term("\x7f", "\\x7f");
    assert_term("\x9b"
                "31m",
                "\\x9b31m"); /* 8-bit CSI, raw */
    assert_term("\xc2\x9b"
                "31m",
                "\\u009b31m"); /* U+009B CSI */
    assert_term("\xc2\x85", "\\u0085");
    assert_term("abc\xe2\x80\xae"
                "fed",
                "abc\\u202efed"); /* RIGHT-TO-LEFT OVERRIDE */
    assert_term("\xe2\x81\xa6\xe2\x80\x8f\xd8\x9c\xe2\x80\xa8", "\\u2066\\u200f\\u061c\\u2028");
    assert_term("\xff\xfe", "\\xff\\xfe");
    assert_term("\xe2\x82", "\\xe2\\x82");
    assert_term("\xe2\x82\xac", "\xe2\x82\xac");
}

static void test_terminal_cut_keeps_characters_whole(void **state)
{
    (void)state;
    char *out = term("ab\xe2\x82\xac", 4);
    assert_string_equal(out, "ab");
    free(out);
    out = term(NULL, 10);
    assert_string_equal(out, "");
    free(out);
}

static void test_terminal_printf(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    const char *none = getenv("SC_TEST_UNSET_VARIABLE"); /* NULL prints nothing */
    sc_term_printf(f, "[%s] %.*s %c %d%% %s\n", "\x1b[2J", 4, "ab\xe2\x82\xac", '\a', 42, none);
    fclose(f);
    assert_string_equal(buf, "[\\x1b[2J] ab \\x07 42% \n");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8_validation),
        cmocka_unit_test(test_clean_replaces_each_invalid_byte),
        cmocka_unit_test(test_cuts_fall_on_boundaries),
        cmocka_unit_test(test_terminal_escapes),
        cmocka_unit_test(test_terminal_cut_keeps_characters_whole),
        cmocka_unit_test(test_terminal_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
