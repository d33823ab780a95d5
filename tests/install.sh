#!/usr/bin/env bash
# `cmake --install BUILD --prefix P` (the cli component) into a temporary
# prefix: the binary, pegasos(1), the bash completion and the example configs
# are there; the man page renders (when man is installed) and names every
# command, setting and objective that `--help` names; the completion script
# sources in bash and completes commands, options, settings and objectives.
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "install.sh: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$prefix" --component cli >/dev/null
for f in bin/pegasos share/man/man1/pegasos.1 share/bash-completion/completions/pegasos \
         share/pegasos/configs/spam.json share/pegasos/configs/experiments/spam_filter.json; do
  [ -f "$prefix/$f" ] || fail "cmake --install did not install $f"
done
pegasos=$prefix/bin/pegasos
# Output captured before it is searched: with pipefail, `grep -q` leaving a
# pipe early fails the writer (SIGPIPE) at random (seen under parallel ctest).
version=$("$pegasos" --version) || fail "the installed binary does not run"
grep -q "pegasos" <<<"$version" || fail "pegasos --version does not say pegasos: $version"

# The man page, rendered when man is installed, else its roff source.
page=$prefix/share/man/man1/pegasos.1
if command -v man >/dev/null; then
  text=$(MANWIDTH=120 man --warnings -l "$page" 2>"$prefix/man.err") || fail "man -l failed: $(cat "$prefix/man.err")"
  [ ! -s "$prefix/man.err" ] || fail "man -l warns: $(cat "$prefix/man.err")"
else
  echo "install.sh: man is not installed; checking the roff source only" >&2
  text=$(sed 's/\\-/-/g; s/\\f[BIR]//g' "$page")
fi
help=$("$pegasos" train --help)
names=$(printf '%s\n' "$help" | sed -n '/^Objectives/,$p' | grep -oE '^  [a-z_0-9]+ ' | tr -d ' ')
[ "$(printf '%s\n' "$names" | wc -l)" -gt 30 ] || fail "train --help lists too few settings and objectives"
for cmd in train predict eval featurize run inspect; do names+=$'\n'"$cmd"; done
for name in $names; do
  grep -qw -- "$name" <<<"$text" || fail "the man page does not mention '$name' (named by --help)"
done

# The completion: source it, then complete as bash would (COMP_WORDS split at '=').
completion=$prefix/share/bash-completion/completions/pegasos
complete_words() {  # WORDS... (the last one is being completed) -> COMPREPLY, one per line
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _pegasos; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$completion" "$@"
}
expect() {  # EXPECTED WORDS...
  local want=$1
  shift
  local got
  got=$(complete_words "$@")
  grep -qx -- "$want" <<<"$got" || fail "completing '$*' does not offer '$want' (got: $(tr '\n' ' ' <<<"$got"))"
}
expect train pegasos tr
expect inspect pegasos ins
expect --quiet pegasos train --qu
expect --line-buffered pegasos predict --line
expect objective= pegasos train --set obj
expect features.hash_bits= pegasos train --set features.hash_b
expect kernel_hinge pegasos train --set objective = ker
expect text_tsv pegasos train --set format = text
echo "install.sh: installed and checked under a temporary prefix"
