/* Environment capture and credential scrubbing. The environment is an allowlist; every value that
 * leaves the process (snapshot, report, output tails, argv) is scrubbed of userinfo in URLs, secret
 * query parameters and key=value pairs, bearer tokens, well-known token shapes and internal hosts.
 */
#include "sc_redact.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sc_util.h"

#define REDACTED "[redacted]"

static const char *const allowed_prefixes[] = {
    "HIP_",   "HSA_",     "ROCR_", "ROCM_",   "MIOPEN_", "NCCL_", "RCCL_", "ASCEND_",
    "TORCH_", "PYTORCH_", "CUDA_", "NVIDIA_", "GPU_",    "HCCL_", "AMD_",  "DTK_",
    "HYDCU_", "CANN_",    "ACL_",  "TE_",     "OMP_",    "MKL_",  "NPU_",  NULL};
static const char *const allowed_names[] = {
    "LD_LIBRARY_PATH", "LD_PRELOAD",        "PATH",      "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV",
    "CONDA_PREFIX",    "CONDA_DEFAULT_ENV", "ROCM_PATH", "HIP_PATH",   "CUDA_HOME",  "CUDA_PATH",
    "LD_BIND_NOW",     "MALLOC_ARENA_MAX",  NULL};
static const char *const secret_words[] = {"TOKEN",      "SECRET", "PASSWORD", "PASSWD",  "KEY",
                                           "CREDENTIAL", "AUTH",   "COOKIE",   "PRIVATE", NULL};
/* Query-parameter or key=value names whose values are secret (matched case-insensitively). */
static const char *const secret_params[] = {"token", "key",  "secret",  "pass", "sig",
                                            "auth",  "cred", "session", NULL};
static const char *const token_prefixes[] = {
    "ghp_",  "gho_",  "ghs_", "ghu_", "github_pat_", "glpat-", "hf_",   "sk-",
    "xoxb-", "xoxp-", "AKIA", "ASIA", "AIza",        "npm_",   "pypi-", NULL};
static const char *const internal_suffixes[] = {".internal", ".corp",     ".local",   ".lan",
                                                ".intra",    ".intranet", ".private", NULL};

bool sc_env_name_secret(const char *name)
{
    for (int i = 0; secret_words[i]; i++)
        if (strcasestr(name, secret_words[i]))
            return true;
    return false;
}

bool sc_env_allowed(const char *name)
{
    for (int i = 0; allowed_names[i]; i++)
        if (strcmp(name, allowed_names[i]) == 0)
            return true;
    for (int i = 0; allowed_prefixes[i]; i++)
        if (sc_starts_with(name, allowed_prefixes[i]))
            return true;
    return false;
}

static bool name_is_secret_param(const char *p, size_t n)
{
    for (int i = 0; secret_params[i]; i++) {
        size_t k = strlen(secret_params[i]);
        for (size_t j = 0; j + k <= n; j++)
            if (strncasecmp(p + j, secret_params[i], k) == 0)
                return true;
    }
    return false;
}

static bool is_word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* Length of the run of characters that may make up a token, URL part or value. */
static size_t value_len(const char *p)
{
    size_t n = 0;
    while (p[n] && !isspace((unsigned char)p[n]) && p[n] != '&' && p[n] != ':' && p[n] != ';' &&
           p[n] != ',' && p[n] != '"' && p[n] != '\'' && p[n] != '@' && p[n] != '/')
        n++;
    return n;
}

/* A private IPv4 literal (10/8, 172.16/12, 192.168/16, 127/8) or an internal DNS suffix. */
static bool host_is_internal(const char *h, size_t n)
{
    char host[256];
    if (n == 0 || n >= sizeof host)
        return false;
    memcpy(host, h, n);
    host[n] = '\0';
    unsigned a, b, c, d;
    if (sscanf(host, "%u.%u.%u.%u", &a, &b, &c, &d) == 4)
        return a == 10 || (a == 172 && b >= 16 && b <= 31) || (a == 192 && b == 168);
    for (int i = 0; internal_suffixes[i]; i++)
        if (sc_ends_with(host, internal_suffixes[i]))
            return true;
    return false;
}

/* Handles "scheme://[user[:pass]@]host"; returns bytes consumed from p (0 when not a URL). */
static size_t scrub_url_authority(const char *p, sc_buf *out)
{
    const char *sep = strstr(p, "://");
    if (!sep || sep == p)
        return 0;
    for (const char *q = p; q < sep; q++)
        if (!isalnum((unsigned char)*q) && *q != '+' && *q != '.' && *q != '-')
            return 0;
    const char *auth = sep + 3;
    size_t alen = strcspn(auth, "/?# \t\n\"'");
    const char *at = memchr(auth, '@', alen);
    sc_buf_append(out, p, (size_t)(auth - p));
    const char *host = auth;
    if (at) {
        sc_buf_append(out, REDACTED "@", strlen(REDACTED) + 1);
        host = at + 1;
    }
    size_t hlen = strcspn(host, ":/?# \t\n\"'");
    if (host_is_internal(host, hlen)) {
        sc_buf_append(out, "[internal-host]", 15);
        sc_buf_append(out, host + hlen, alen - (size_t)(host - auth) - hlen);
    } else {
        sc_buf_append(out, host, alen - (size_t)(host - auth));
    }
    return (size_t)(auth - p) + alen;
}

/* Handles "name=value" where name looks secret; returns bytes consumed (0 when not one). */
static size_t scrub_pair(const char *s, size_t at, sc_buf *out)
{
    size_t start = at;
    while (start > 0 && is_word_char(s[start - 1]))
        start--;
    if (s[at] != '=' || start == at || !name_is_secret_param(s + start, at - start))
        return 0;
    size_t vlen = value_len(s + at + 1);
    sc_buf_append(out, "=" REDACTED, 1 + strlen(REDACTED));
    return 1 + vlen;
}

/* Handles tokens of a well-known shape and "Bearer xyz"; returns bytes consumed. */
static size_t scrub_token(const char *s, size_t i, sc_buf *out)
{
    if (i > 0 && is_word_char(s[i - 1]))
        return 0;
    size_t kw = strncasecmp(s + i, "bearer ", 7) == 0  ? 7
                : strncasecmp(s + i, "basic ", 6) == 0 ? 6
                                                       : 0;
    if (kw) {
        size_t vlen = value_len(s + i + kw);
        if (vlen == 0)
            return 0;
        sc_buf_append(out, s + i, kw);
        sc_buf_append(out, REDACTED, strlen(REDACTED));
        return kw + vlen;
    }
    for (int k = 0; token_prefixes[k]; k++) {
        size_t plen = strlen(token_prefixes[k]);
        size_t n = 0;
        while (is_word_char(s[i + n]))
            n++;
        if (n >= plen + 8 && strncmp(s + i, token_prefixes[k], plen) == 0) {
            sc_buf_append(out, REDACTED, strlen(REDACTED));
            return n;
        }
    }
    return 0;
}

char *sc_redact_value(const char *value)
{
    sc_buf out;
    sc_buf_init(&out);
    sc_buf_append(&out, "", 0);
    for (size_t i = 0; value[i];) {
        size_t used = 0;
        if (isalpha((unsigned char)value[i]) && (i == 0 || !isalnum((unsigned char)value[i - 1])))
            used = scrub_url_authority(value + i, &out);
        if (!used)
            used = scrub_pair(value, i, &out);
        if (!used)
            used = scrub_token(value, i, &out);
        if (!used) {
            sc_buf_append(&out, value + i, 1);
            used = 1;
        }
        i += used;
    }
    if (out.oom) {
        sc_buf_free(&out);
        return NULL;
    }
    return out.data;
}

cJSON *sc_env_capture(char *const *envp)
{
    cJSON *env = cJSON_CreateObject();
    for (int i = 0; env && envp && envp[i]; i++) {
        const char *eq = strchr(envp[i], '=');
        char name[256];
        if (!eq || (size_t)(eq - envp[i]) >= sizeof name)
            continue;
        memcpy(name, envp[i], (size_t)(eq - envp[i]));
        name[eq - envp[i]] = '\0';
        if (!sc_env_allowed(name))
            continue;
        cJSON_DeleteItemFromObject(env, name);
        if (sc_env_name_secret(name)) {
            cJSON_AddStringToObject(env, name, REDACTED);
            continue;
        }
        char *clean = sc_redact_value(eq + 1);
        cJSON_AddStringToObject(env, name, clean ? clean : REDACTED);
        free(clean);
    }
    return env;
}

void sc_redact_json(cJSON *node)
{
    if (!node)
        return;
    if (cJSON_IsString(node) && node->valuestring) {
        char *clean = sc_redact_value(node->valuestring);
        if (clean && strcmp(clean, node->valuestring) != 0)
            cJSON_SetValuestring(node, clean);
        free(clean);
    }
    for (cJSON *c = node->child; c; c = c->next)
        sc_redact_json(c);
}
