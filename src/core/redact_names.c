/* Which names hold secrets: the environment allowlist, environment names that look secret, and
 * the names in text ("password=", "X-Api-Key:", "--token") whose values the redactor hides. */
#include "sc_redact.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "sc_backend.h"
#include "sc_util.h"

#define NAME_MAX_LEN 64

/* The framework's and the loader's variables; each backend's own prefixes, names and visibility
 * variables come from its descriptor (sc_backend.h). */
static const char *const allowed_prefixes[] = {"TORCH_", "PYTORCH_", "TE_", "OMP_", "MKL_", NULL};
static const char *const allowed_names[] = {
    "LD_LIBRARY_PATH",   "LD_PRELOAD",       "LD_BIND_NOW", "PATH",
    "PYTHONPATH",        "PYTHONHOME",       "VIRTUAL_ENV", "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV", "MALLOC_ARENA_MAX", NULL};
/* An environment name that contains one of these anywhere is secret (HF_TOKEN_X, NCCL_AUTHKEY). */
static const char *const env_secret_words[] = {"TOKEN",      "SECRET",  "PASSWORD",   "PASSWD",
                                               "PASSPHRASE", "KEY",     "CREDENTIAL", "AUTH",
                                               "COOKIE",     "PRIVATE", NULL};
/* A name that contains one of these anywhere is secret (db_password_2, client_secret_value). */
static const char *const strong_words[] = {"password",   "passwd",     "passphrase", "secret",
                                           "credential", "privatekey", NULL};
/* A name whose last word, or last two words run together, ends with one of these is secret
 * (api_key, apiKey, X-Auth-Token, session_id, NCCL_PSK); "KeyError", "max_tokens" and
 * "key_path" are not. */
static const char *const weak_endings[] = {
    "key", "token",  "auth",    "authorization", "sig",  "signature", "pass", "pwd",
    "psk", "cookie", "session", "sessionid",     "cred", "creds",     "jwt",  NULL};
/* Names that match the rules above but are documented to hold no secret: NCCL_IB_PKEY is the
 * InfiniBand partition key index (a small number such as 0x8001). */
static const char *const not_secret[] = {"nccl_ib_pkey", NULL};

static bool has_prefix(const char *name, const char *const *prefixes)
{
    for (; prefixes && *prefixes; prefixes++)
        if (sc_starts_with(name, *prefixes))
            return true;
    return false;
}

bool sc_env_allowed(const char *name)
{
    if (sc_backend_list_has(allowed_names, name) || has_prefix(name, allowed_prefixes))
        return true;
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        if (has_prefix(name, (*b)->env_prefixes) || sc_backend_list_has((*b)->env_names, name) ||
            sc_backend_list_has((*b)->visibility_vars, name))
            return true;
    return false;
}

/* The variables the passive probes look files up by, beyond the allowlist. */
static const char *const lookup_names[] = {
    "HOME", "PYENV_ROOT", "PYENV_VERSION", "PYTHONNOUSERSITE", "container", NULL};
/* Variables that act on what a process runs: a replay never sets them in its own environment. */
static const char *const never_set[] = {"LD_PRELOAD", "LD_AUDIT", NULL};

bool sc_env_replayed(const char *name)
{
    return sc_env_allowed(name) || sc_backend_list_has(lookup_names, name);
}

bool sc_env_settable(const char *name)
{
    return sc_env_replayed(name) && !sc_backend_list_has(never_set, name);
}

static bool ends_with_any(const char *word, size_t len, const char *const *list)
{
    for (int i = 0; list[i]; i++) {
        size_t k = strlen(list[i]);
        if (len >= k && memcmp(word + len - k, list[i], k) == 0)
            return true;
    }
    return false;
}

/* The lower-case name without leading dashes into low; false when it is empty or too long. */
static bool lower_name(const char *name, size_t len, char *low)
{
    while (len > 0 && *name == '-')
        name++, len--;
    if (len == 0 || len > NAME_MAX_LEN)
        return false;
    for (size_t i = 0; i < len; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[len] = '\0';
    return true;
}

static bool listed(const char *low, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(low, list[i]) == 0)
            return true;
    return false;
}

bool sc_secret_name(const char *name, size_t len)
{
    char low[NAME_MAX_LEN + 1], joined[2 * NAME_MAX_LEN + 1];
    if (!lower_name(name, len, low) || listed(low, not_secret))
        return false;
    for (int i = 0; strong_words[i]; i++)
        if (strstr(low, strong_words[i]))
            return true;
    size_t n = strlen(low), last = n, prev;
    while (last > 0 && isalnum((unsigned char)low[last - 1]))
        last--;
    if (ends_with_any(low + last, n - last, weak_endings))
        return true;
    if (last == 0)
        return false;
    prev = last - 1;
    while (prev > 0 && isalnum((unsigned char)low[prev - 1]))
        prev--;
    size_t plen = last - 1 - prev;
    memcpy(joined, low + prev, plen);
    memcpy(joined + plen, low + last, n - last);
    return ends_with_any(joined, plen + n - last, weak_endings);
}

bool sc_env_name_secret(const char *name)
{
    char low[NAME_MAX_LEN + 1];
    if (lower_name(name, strlen(name), low) && listed(low, not_secret))
        return false;
    for (int i = 0; env_secret_words[i]; i++)
        if (strcasestr(name, env_secret_words[i]))
            return true;
    return sc_secret_name(name, strlen(name));
}
