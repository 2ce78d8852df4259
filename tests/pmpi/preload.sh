# Sourced by the drop-in tests: the LD_PRELOAD list for libkport-pmpi.so.
# A sanitizer build's runtimes must come first in the list, ASan first, or
# the loader refuses the library.
# usage: preload=$(kport_preload /abs/path/libkport-pmpi.so)
kport_preload() {
    local lib=$1 list= rt p
    for rt in asan ubsan; do
        p=$(ldd "$lib" | awk -v rt="lib$rt.so" 'index($1, rt) == 1 {print $3}')
        [ -z "$p" ] || list="$list$p:"
    done
    echo "$list$lib"
}
