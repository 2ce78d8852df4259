#!/usr/bin/env bash
# test_readme: the README's shell commands are executable documentation.
#
# usage: test_readme.sh SOURCE_DIR BUILD_DIR FLAVOR SANITIZE PLAIN_APP [README]
#   FLAVOR    openmpi | mpich (KPORT_MPI_FLAVOR of BUILD_DIR)
#   SANITIZE  1 | 0 (KPORT_SANITIZE of BUILD_DIR)
#   PLAIN_APP an MPI program that knows nothing of kport (tests/pmpi/plain_app.c)
#   README    the file to test (default SOURCE_DIR/README.md)
#
# Every fenced ```sh (or ```bash, ```shell) block that names a build path,
# build/NAME or build/NAME/REST, is handled generically:
#
#   1. NAME must be a build `make` creates (`-B build/NAME` in the Makefile)
#      and one this test knows: ompi (Open MPI), mpich (MPICH), asan (Open
#      MPI with sanitizers).
#   2. Every path it names must exist in this build: build/NAME/REST is looked
#      up as BUILD_DIR/REST (the builds share one layout), so a stale path
#      fails the test in every build, whichever NAME it says.
#   3. The block runs if NAME is the kind of build under test (a block naming
#      build/mpich runs in the MPICH build's test, build/ompi in the Open MPI
#      one, and so on; the others are only checked as in 2). It runs as
#      written, from SOURCE_DIR, under `bash -e -o pipefail` with a timeout;
#      two substitutions only: build/NAME (also as $PWD/build/NAME) ->
#      BUILD_DIR, which changes nothing when the test runs in build/NAME
#      itself as under `make test`; and the placeholder ./your_app ->
#      PLAIN_APP. The variables the test suite sets to run Open MPI as root
#      with more ranks than cores (OMPI_ALLOW_RUN_AS_ROOT,
#      OMPI_ALLOW_RUN_AS_ROOT_CONFIRM, OMPI_MCA_rmaps_base_oversubscribe) are
#      removed: what a command needs, it must say itself, as a reader types it.
#   4. Checks: exit status 0; no dynamic-loader warning ("cannot be
#      preloaded": a preload that loads nothing, the program silently on the
#      native collectives); a block that preloads libkport-pmpi.so:
#      KPORT_VERBOSE=1 (exported if the block does not set it itself) shows
#      every collective of the program served by kport (unless the block sets
#      KPORT_DISABLE) and the program's own "0 failed" line; kport-bench: its
#      table (a "# Size" header and a row) or its JSON lines; kport-check: its
#      "N passed, 0 failed" line (or, with --dump / --goal, some output).
#
# A block is not run or checked when the last non-blank line before its
# fence is `<!-- test_readme: skip: REASON -->` (REASON required), e.g. for a
# command that installs into the system or runs the test suite itself. The
# README must keep at least one drop-in block (LD_PRELOAD=...libkport-pmpi.so).
#
# Output: one line per block; "test_readme: PASS" or the failures and exit 1.
set -uo pipefail

if [ $# -lt 5 ]; then
    echo "usage: $0 SOURCE_DIR BUILD_DIR FLAVOR SANITIZE PLAIN_APP [README]" >&2
    exit 2
fi
src=$(cd "$1" && pwd) || exit 2
bdir=$(cd "$2" && pwd) || exit 2
flavor=$3
sanitize=$4
app=$(cd "$(dirname "$5")" && pwd)/$(basename "$5")
readme=${6:-$src/README.md}
rname=$(basename "$readme")
block_timeout=${KPORT_README_TIMEOUT:-300}

if [ -n "${KPORT_README_TEST_RUNNING:-}" ]; then
    echo "test_readme: nested run (a README block ran the test suite): nothing to do"
    exit 0
fi
export KPORT_README_TEST_RUNNING=1

case "$sanitize" in 1 | ON | on | TRUE | true | YES | yes) sanitize=1 ;; *) sanitize=0 ;; esac

# The builds `make` creates (see the Makefile): NAME -> "FLAVOR SANITIZE".
declare -A kinds=([ompi]="openmpi 0" [mpich]="mpich 0" [asan]="openmpi 1")
here=
for n in "${!kinds[@]}"; do
    [ "${kinds[$n]}" = "$flavor $sanitize" ] && here=$n
done
if [ -z "$here" ]; then
    echo "test_readme: FAIL: no build of the Makefile is \"$flavor\" with sanitizers=$sanitize" >&2
    exit 1
fi

failures=0
fail() {
    echo "test_readme: FAIL: $*" >&2
    failures=$((failures + 1))
}
[ -f "$readme" ] || { echo "test_readme: FAIL: no $readme" >&2; exit 1; }
[ -x "$app" ] || { echo "test_readme: FAIL: no program $app" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-readme.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Extract the shell blocks: $tmp/N.sh (text, fence indentation removed) and
# $tmp/N.meta ("LINE<TAB>SKIP-REASON", the reason empty when not skipped).
awk -v dir="$tmp" '
    function flush_meta() { printf "%d\t%s\n", start, reason > (dir "/" n ".meta"); close(dir "/" n ".meta") }
    !infence && /^[ \t]*```/ {
        line = $0
        match(line, /^[ \t]*/); indent = RLENGTH
        info = substr(line, indent + 4); gsub(/[ \t]/, "", info)
        infence = 1
        shell = (info == "sh" || info == "bash" || info == "shell")
        if (shell) {
            n++; start = NR; reason = ""
            if (lastnb ~ /^[ \t]*<!--[ \t]*test_readme:[ \t]*skip:/) {
                reason = lastnb
                sub(/^[ \t]*<!--[ \t]*test_readme:[ \t]*skip:[ \t]*/, "", reason)
                sub(/[ \t]*-->[ \t]*$/, "", reason)
                if (reason == "") reason = "-"
            }
            printf "" > (dir "/" n ".sh")
        }
        next
    }
    infence && /^[ \t]*```[ \t]*$/ {
        if (shell) { close(dir "/" n ".sh"); flush_meta() }
        infence = 0; shell = 0; lastnb = ""
        next
    }
    infence {
        if (shell) {
            l = $0
            if (indent > 0 && substr(l, 1, indent) ~ /^[ \t]*$/) l = substr(l, indent + 1)
            print l >> (dir "/" n ".sh")
        }
        next
    }
    /[^ \t]/ { lastnb = $0 }
    END { if (infence && shell) { close(dir "/" n ".sh"); start = -start; flush_meta() } }
' "$readme"

# build paths named by a block: "build/NAME" or "build/NAME/REST", one per line
# (a path starts at the line start, after a blank, = : quote or parenthesis,
# or after $PWD/), trailing sentence punctuation removed
build_paths() {
    grep -oE '(^|[[:space:]=:"'"'"'(]|\$PWD/|\$\{PWD\}/)build/[A-Za-z0-9_.+-]+(/[A-Za-z0-9_.+/-]*)?' "$1" |
        sed -E 's#^.*(build/)#\1#; s#[./,]+$##' | sort -u
}

nblocks=0 nrun=0 nchecked=0 nskipped=0 npreload=0
nshell=$(find "$tmp" -name '*.meta' | wc -l)
for ((n = 1; n <= nshell; n++)); do
    blk=$tmp/$n.sh
    IFS=$'\t' read -r line reason <"$tmp/$n.meta"
    if [ "$line" -lt 0 ]; then
        fail "$rname line $((-line)): a shell block is never closed"
        continue
    fi
    where="$rname line $line"
    paths=$(build_paths "$blk")
    [ -n "$paths" ] || continue # no build path: not this test's business
    nblocks=$((nblocks + 1))
    if grep -qE 'LD_PRELOAD=[^[:space:]]*libkport-pmpi' "$blk"; then npreload=$((npreload + 1)); fi
    if [ -n "$reason" ]; then
        if [ "$reason" = "-" ]; then
            fail "$where: skip marker without a reason"
        else
            echo "test_readme: $where: skipped ($reason)"
            nskipped=$((nskipped + 1))
        fi
        continue
    fi

    # 1 and 2: known builds, existing paths
    names=$(echo "$paths" | sed -E 's#^build/([^/]+).*#\1#' | sort -u)
    ok=1
    for name in $names; do
        if [ -z "${kinds[$name]:-}" ] || ! grep -qE -- "-B build/$name([[:space:]]|$)" "$src/Makefile"; then
            fail "$where: names build/$name, a build that \`make\` does not create (it makes build/ompi, build/mpich, build/asan)"
            ok=0
        fi
    done
    while read -r p; do
        rest=${p#build/*/}
        [ "$rest" = "$p" ] && rest=
        target=$bdir${rest:+/$rest}
        if [ ! -e "$target" ]; then
            fail "$where: names $p, which does not exist (in this build: $target)"
            ok=0
        fi
    done <<<"$paths"
    [ "$ok" = 1 ] || continue
    if [ "$names" != "$here" ]; then
        echo "test_readme: $where: names $(echo $names | sed 's/\([^ ]*\)/build\/\1/g'): paths exist; runs in that build's test (this is build/$here)"
        nchecked=$((nchecked + 1))
        continue
    fi

    # 3: run it
    run=$tmp/$n.run.sh
    sedargs=(-e 's#(^|[[:space:]])\./your_app([[:space:];|&)]|$)#\1'"$app"'\2#g')
    if [ "$bdir" != "$src/build/$here" ]; then
        for _ in 1 2; do
            sedargs+=(-e 's#\$\{?PWD\}?/build/'"$here"'([^A-Za-z0-9_.+-]|$)#'"$bdir"'\1#g'
                -e 's#(^|[[:space:]=:"'"'"'(])build/'"$here"'([^A-Za-z0-9_.+-]|$)#\1'"$bdir"'\2#g')
        done
        mapped=" (build/$here -> $bdir)"
    else
        mapped=
    fi
    sed -E "${sedargs[@]}" "$blk" >"$run"
    envs=(-u OMPI_ALLOW_RUN_AS_ROOT -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM -u OMPI_MCA_rmaps_base_oversubscribe)
    preload=0
    if grep -qE 'LD_PRELOAD=[^[:space:]]*libkport-pmpi' "$blk"; then
        preload=1
        grep -q KPORT_VERBOSE "$blk" || envs+=(KPORT_VERBOSE=1)
    fi
    echo "test_readme: $where: running$mapped:"
    sed 's/^/    /' "$run"
    out=$tmp/$n.out
    t0=$(date +%s%N)
    (cd "$src" && env "${envs[@]}" timeout -k 10 "$block_timeout" bash -e -o pipefail "$run") >"$out" 2>&1
    rc=$?
    t1=$(date +%s%N)
    nrun=$((nrun + 1))
    bad=0
    why() {
        fail "$where: $*"
        bad=1
    }
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        why "timed out after ${block_timeout} s"
    elif [ "$rc" != 0 ]; then
        why "exit status $rc"
        if grep -q "attempt to run as root" "$out"; then
            why "Open MPI refuses root: the command needs --allow-run-as-root (or say how to set OMPI_ALLOW_RUN_AS_ROOT)"
        fi
        if grep -qE "not enough slots|There are not enough slots" "$out"; then
            why "more ranks than cores: the command needs --oversubscribe"
        fi
    fi
    [ "$rc" = 0 ] || bad=1 # the output checks below would only repeat it
    if grep -qE "cannot be preloaded|ERROR: ld\.so" "$out"; then
        why "the dynamic loader did not load a preloaded library: $(grep -m1 -E 'cannot be preloaded|ERROR: ld\.so' "$out")"
    fi
    if [ "$rc" = 0 ] && [ "$preload" = 1 ] && ! grep -q KPORT_DISABLE "$blk"; then
        for c in Allgather Gather Alltoall Barrier; do
            grep -q "kport-pmpi: MPI_$c served by kport (" "$out" || why "MPI_$c was not served by kport (no \"kport-pmpi: MPI_$c served by kport\" line)"
        done
    fi
    if [ "$rc" = 0 ] && grep -qE '(^|[[:space:]])\./your_app([[:space:];|&)]|$)' "$blk"; then
        grep -qE "^plain_app: [0-9]+ passed, 0 failed" "$out" || why "the program did not report \"N passed, 0 failed\""
    fi
    if [ "$rc" = 0 ] && grep -q 'kport-bench' "$blk"; then
        if ! { grep -qE '^# Size[[:space:]]' "$out" && grep -qE '^[0-9]+[[:space:]]+[0-9]' "$out"; } && ! grep -q '^{"coll"' "$out"; then
            why "kport-bench printed no table (\"# Size\" header and rows) and no JSON lines"
        fi
    fi
    if [ "$rc" = 0 ] && grep -q 'kport-check' "$blk"; then
        if grep -qE -- '--dump|--goal' "$blk"; then
            [ -s "$out" ] || why "kport-check printed nothing"
        else
            grep -qE '[0-9]+ passed, 0 failed' "$out" || why "kport-check printed no \"N passed, 0 failed\" line"
        fi
    fi
    if [ "$bad" = 1 ]; then
        echo "--- output of the block at $where ---" >&2
        tail -n 60 "$out" >&2
        echo "---" >&2
    else
        printf 'test_readme: %s: ok (%.1f s)\n' "$where" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e9 }')"
        { grep -E 'served by kport' "$out" | sed -E 's/ \(.*//' | sort | uniq -c | sed -E 's/^ *([0-9]+) (.*)/\2 (\1 lines)/'
          grep -E 'passed, [0-9]+ failed' "$out"
          grep -cE '^\{"coll"' "$out" | grep -v '^0$' | sed 's/$/ JSON lines/'
          grep -E '^# Size[[:space:]]' "$out" | head -1; } | sed 's/^/    -> /' 
    fi
done

if [ "$npreload" = 0 ]; then
    fail "the README has no drop-in block (a shell block with LD_PRELOAD=...libkport-pmpi.so naming a build path)"
fi
echo "test_readme: $nblocks blocks name a build path: $nrun run here (build/$here), $nchecked checked for another build, $nskipped skipped"
if [ "$failures" -gt 0 ]; then
    echo "test_readme: $failures failures" >&2
    exit 1
fi
echo "test_readme: PASS"
