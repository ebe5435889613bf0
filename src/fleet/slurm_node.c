/* The pure half of --slurm: reading `scontrol show node` (outside data: any bytes, parsed without
 * trusting its shape), the drain reason a verdict makes, and the choice between drain, resume and
 * leaving the node alone. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sc_json.h"
#include "sc_slurm.h"
#include "sc_text.h"

/* Copies the n bytes at s into buf, cut on a character boundary, trailing blanks removed. */
static void copy_field(char *buf, size_t size, const char *s, size_t n)
{
    n = sc_utf8_prefix(s, n, n < size - 1 ? n : size - 1);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    memcpy(buf, s, n);
    buf[n] = '\0';
}

/* Slurm shows a reason as "TEXT [user@2026-12-01T23:06:02]": the bracket is who and when. */
static void strip_stamp(char *reason)
{
    size_t n = strlen(reason);
    char *open = n && reason[n - 1] == ']' ? strrchr(reason, '[') : NULL;
    if (open && open > reason && open[-1] == ' ' && memchr(open, '@', (size_t)(reason + n - open)))
        open[-1] = '\0';
}

/* Reads one line's fields: Reason= takes the rest of the line, State= one word. */
static void read_line(const char *line, size_t n, sc_slurm_node *node, int *nodes)
{
    size_t lead = 0;
    while (lead < n && (line[lead] == ' ' || line[lead] == '\t'))
        lead++;
    line += lead;
    n -= lead;
    if (n >= 9 && memcmp(line, "NodeName=", 9) == 0)
        (*nodes)++;
    if (*nodes != 1)
        return;
    if (n >= 7 && memcmp(line, "Reason=", 7) == 0) {
        copy_field(node->reason, sizeof node->reason, line + 7, n - 7);
        strip_stamp(node->reason);
        return;
    }
    for (size_t i = 0; i + 6 <= n && !node->state[0]; i++) {
        if ((i == 0 || line[i - 1] == ' ') && memcmp(line + i, "State=", 6) == 0) {
            size_t end = i + 6;
            while (end < n && line[end] != ' ' && line[end] != '\t')
                end++;
            copy_field(node->state, sizeof node->state, line + i + 6, end - i - 6);
        }
    }
}

int sc_slurm_parse_node(const char *text, size_t len, sc_slurm_node *node)
{
    memset(node, 0, sizeof *node);
    int nodes = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        read_line(text + at, n, node, &nodes);
        at += n + 1;
    }
    node->found = nodes > 0;
    return node->found ? 0 : -ENOENT;
}

/* A base state or flag of state, also as the -ED and -ING forms sinfo prints ("DRAIN" in
 * "IDLE+DRAIN", "DRAINED", "DOWN" in "DOWN*+DRAIN"; Slurm marks states with a trailing '*', '~',
 * '#' and the like). */
static bool has_state(const char *state, const char *word)
{
    char copy[sizeof((sc_slurm_node *)0)->state], *save = NULL;
    size_t n = strlen(word);
    snprintf(copy, sizeof copy, "%s", state);
    for (char *t = strtok_r(copy, "+", &save); t; t = strtok_r(NULL, "+", &save)) {
        size_t len = strlen(t);
        while (len > 0 && !(t[len - 1] >= 'A' && t[len - 1] <= 'Z'))
            t[--len] = '\0';
        if (strncmp(t, word, n) == 0 &&
            (t[n] == '\0' || strcmp(t + n, "ED") == 0 || strcmp(t + n, "ING") == 0))
            return true;
    }
    return false;
}

sc_slurm_action sc_slurm_decide(bool failed, const sc_slurm_node *node, const char *reason,
                                const char **why)
{
    bool ours = strncmp(node->reason, SC_SLURM_PREFIX, strlen(SC_SLURM_PREFIX)) == 0;
    bool drained = has_state(node->state, "DRAIN");
    bool held = drained || has_state(node->state, "DOWN") || has_state(node->state, "FAIL");
    if (held && !ours) {
        *why = "left alone: drained or down for another reason";
        return SC_SLURM_KEEP;
    }
    if (failed && drained && strcmp(node->reason, reason) == 0) {
        *why = "already drained for this";
        return SC_SLURM_KEEP;
    }
    if (failed) {
        *why = "drained";
        return SC_SLURM_DRAIN;
    }
    if (drained && ours) {
        *why = "resumed: stackcheck had drained it";
        return SC_SLURM_RESUME;
    }
    *why = "";
    return SC_SLURM_KEEP;
}

/* Appends text to buf keeping only what a reason may hold. */
static void reason_put(char *buf, size_t size, const char *text)
{
    size_t n = strlen(buf);
    for (const char *p = text ? text : "?"; *p && n + 1 < size; p++)
        buf[n++] = *p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\' ? *p : '_';
    buf[n] = '\0';
}

void sc_slurm_reason(const cJSON *snapshot, char *buf, size_t size)
{
    const cJSON *ff = sc_json_member(sc_json_member(snapshot, "summary"), "first_failure");
    size_t cap = size < SC_SLURM_REASON_MAX + 1 ? size : SC_SLURM_REASON_MAX + 1;
    buf[0] = '\0';
    if (!cJSON_IsObject(ff))
        return;
    snprintf(buf, cap, SC_SLURM_PREFIX " ");
    reason_put(buf, cap, sc_json_str(ff, "layer"));
    reason_put(buf, cap, " ");
    if (sc_json_str(ff, "finding")) {
        reason_put(buf, cap, sc_json_str(ff, "finding"));
        return;
    }
    reason_put(buf, cap, sc_json_str(ff, "probe"));
    reason_put(buf, cap, " ");
    reason_put(buf, cap, sc_json_str(ff, "status"));
}
