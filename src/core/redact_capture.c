/* The one door, for what a capture holds. A file that may hold secrets is never captured, even if
 * read; /etc/passwd and /etc/group keep only the accounts a replay names (system accounts, the
 * capturing user and groups, device-node owners), as "name:x:id:" lines without real names, home
 * directories, shells or members; every other text file goes through the snapshot's scrubbing.
 * Binary files (ELF libraries) are kept as they are. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_redact.h"
#include "sc_util.h"

/* Files that hold credentials or keys by their nature. */
static const char *const denied[] = {"/etc/shadow*",
                                     "/etc/gshadow*",
                                     "/etc/sudoers*",
                                     "/proc/*/environ",
                                     "*/.ssh/*",
                                     "*/.gnupg/*",
                                     "*/.netrc",
                                     "*/.git-credentials",
                                     "*/.pypirc",
                                     "*/.docker/config.json",
                                     "*/.aws/credentials",
                                     "*/.kube/config",
                                     "*/.config/gh/hosts.yml",
                                     "*/secrets/*",
                                     "*.pem",
                                     "*.key",
                                     NULL};

bool sc_redact_capture_denied(const char *path)
{
    for (size_t i = 0; denied[i]; i++)
        if (fnmatch(denied[i], path, 0) == 0)
            return true;
    return false;
}

static bool keep_id(unsigned long id, const unsigned *keep, size_t nkeep)
{
    if (id < 1000 || id == 65534) /* system accounts and groups, nobody and nogroup */
        return true;
    for (size_t i = 0; i < nkeep; i++)
        if (keep[i] == id)
            return true;
    return false;
}

/* One line of a colon file, reduced: "name:x:id:gid:::" (passwd) or "name:x:id:" (group); false
 * when it is dropped. */
static bool reduce_line(const char *line, size_t len, bool passwd, const unsigned *keep,
                        size_t nkeep, sc_buf *out)
{
    const char *f[4] = {line, NULL, NULL, NULL};
    size_t nf = 1;
    for (size_t i = 0; i < len && nf < 4; i++)
        if (line[i] == ':')
            f[nf++] = line + i + 1;
    if (nf < (passwd ? 4u : 3u) || f[1] - f[0] < 2)
        return false;
    char *end;
    unsigned long id = strtoul(f[2], &end, 10);
    if (end == f[2] || *end != ':' || !keep_id(id, keep, nkeep))
        return false;
    int name_len = (int)(f[1] - f[0] - 1);
    if (passwd) {
        unsigned long gid = strtoul(f[3], &end, 10);
        sc_buf_printf(out, "%.*s:x:%lu:%lu:::\n", name_len, f[0], id, gid);
    } else {
        sc_buf_printf(out, "%.*s:x:%lu:\n", name_len, f[0], id);
    }
    return true;
}

static char *reduce_accounts(const char *text, size_t n, bool passwd, const unsigned *keep,
                             size_t nkeep, size_t *out_len)
{
    sc_buf out;
    sc_buf_init(&out);
    sc_buf_append(&out, "", 0);
    for (size_t pos = 0; pos < n;) {
        const char *nl = memchr(text + pos, '\n', n - pos);
        size_t len = nl ? (size_t)(nl - (text + pos)) : n - pos;
        reduce_line(text + pos, len, passwd, keep, nkeep, &out);
        pos += len + 1;
    }
    if (out.oom) {
        sc_buf_free(&out);
        return NULL;
    }
    *out_len = out.len;
    return out.data ? out.data : strdup("");
}

int sc_redact_capture(const char *path, const char *data, size_t n, const unsigned *keep,
                      size_t nkeep, char **out, size_t *out_len)
{
    if (memchr(data, '\0', n))
        return 0; /* binary: kept as it is */
    if (strcmp(path, "/etc/passwd") == 0 || strcmp(path, "/etc/group") == 0)
        *out = reduce_accounts(data, n, strcmp(path, "/etc/passwd") == 0, keep, nkeep, out_len);
    else if ((*out = sc_redact_text(data, n)) != NULL)
        *out_len = strlen(*out);
    return *out ? 1 : -ENOMEM;
}
