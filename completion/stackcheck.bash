# bash completion for stackcheck: sub-commands, options, probe and finding ids for `explain`, and
# file arguments. The words come from the binary being completed (its --help and `list`), so they
# always match its version; nothing else is needed (no bash-completion package on a fresh node).
# Installed as share/bash-completion/completions/stackcheck; or: source stackcheck.bash

declare -gA _stackcheck_cache

# The output of `BIN ARGS...`, asked once per binary and arguments in a shell.
_stackcheck_ask() {
    local key="$*"
    if [[ -z ${_stackcheck_cache[$key]+set} ]]; then
        _stackcheck_cache[$key]=$(LC_ALL=C NO_COLOR=1 "$@" 2>/dev/null)
    fi
    printf '%s\n' "${_stackcheck_cache[$key]}"
}

# The sub-commands, from the usage lines ("stackcheck [run] ...", "stackcheck explain ID").
_stackcheck_subcommands() {
    _stackcheck_ask "$1" --help |
        sed -nE 's/^(Usage:)? +stackcheck \[?([a-z]+)\]?.*/\2/p'
}

# "OPTION METAVAR" per line (METAVAR empty for a flag) for a sub-command ("" for run), from its
# --help: the option lines ("  --json FILE   ...", "  -q, --quiet   ...") and the bracketed
# options of its usage line ("stackcheck diff ... [--rtol R]").
_stackcheck_options() {
    local help
    help=$(_stackcheck_ask "$1" ${2:+"$2"} --help)
    {
        sed -nE 's/^ +(-[a-zA-Z]), (--[a-z][a-z0-9-]*)( ([A-Z][A-Z|.]*))?.*/\1\n\2 \4/p
                 s/^ +(--[a-z][a-z0-9-]*)( ([A-Z][A-Z|.]*))?.*/\1 \3/p' <<<"$help"
        [[ -n $2 ]] && grep -E "stackcheck $2( |\$)" <<<"$help" |
            grep -oE '\[--[a-z][a-z0-9-]*( [A-Z][A-Z|.]*)?\]' | tr -d '[]'
        echo --help
    } | awk '!seen[$1]++ { print $1, $2 }'
}

# The metavariable of option opt of a sub-command; non-zero status when opt takes no value.
_stackcheck_metavar() {
    local opt meta
    while read -r opt meta; do
        if [[ $opt == "$3" ]]; then
            [[ -n $meta ]] && printf '%s\n' "$meta"
            [[ -n $meta ]]
            return
        fi
    done < <(_stackcheck_options "$1" "$2")
    return 1
}

# Probe ids and finding ids, from `stackcheck list` (the first word of each indented line).
_stackcheck_ids() {
    _stackcheck_ask "$1" list | sed -nE 's/^  ([a-z0-9_]+\.[a-z0-9_.-]+) .*/\1/p'
}

# Completes cur as the value of an option whose metavariable is meta.
_stackcheck_value() {
    local bin=$1 meta=$2 cur=$3
    case $meta in
    DIR) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
    FILE* | PATH | *.json) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    CMD) mapfile -t COMPREPLY < <(compgen -c -- "$cur") ;;
    PROBE | ID) mapfile -t COMPREPLY < <(compgen -W "$(_stackcheck_ids "$bin")" -- "$cur") ;;
    *) COMPREPLY=() ;; # a number, an architecture, a module: nothing to offer
    esac
}

_stackcheck() {
    local bin=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev="" sub="" meta
    [[ $bin == "~/"* ]] && bin=$HOME/${bin#"~/"}
    COMPREPLY=()
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    # "--json=FILE": bash splits the word at "=".
    if [[ $cur == "=" ]]; then
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        cur=""
    elif [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    fi
    local subs
    subs=" $(_stackcheck_subcommands "$bin" | tr '\n' ' ') "
    # A sub-command is the first argument (`run` may also follow options: its options are the
    # top level's).
    ((COMP_CWORD > 1)) && [[ $subs == *" ${COMP_WORDS[1]} "* ]] && sub=${COMP_WORDS[1]}
    [[ $sub == run ]] && sub=""
    if [[ $prev == -* ]] && meta=$(_stackcheck_metavar "$bin" "$sub" "$prev"); then
        _stackcheck_value "$bin" "$meta" "$cur"
        return 0
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_stackcheck_options "$bin" "$sub" | cut -d' ' -f1)" -- "$cur")
        return 0
    fi
    case $sub in
    "") ((COMP_CWORD == 1)) && mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur") ;;
    explain) ((COMP_CWORD == 2)) && mapfile -t COMPREPLY < <(compgen -W "$(_stackcheck_ids "$bin")" -- "$cur") ;;
    list) ;;
    *) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    esac
    return 0
}

complete -F _stackcheck stackcheck
