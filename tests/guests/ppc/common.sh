# common.sh - what the scripts that build freestanding PowerPC guests share (sourced by build.sh here
# and by ../bench/build.sh; both set $here to their own folder, two levels below the workspace).
#
# PPC_FLAGS: -mcpu=750, hard float, no PIE/PIC (Debian's default is PIE), no small-data sections, no
# unwind tables, no build id, and no libc; libgcc gives the 64-bit division helpers.
# -fno-tree-loop-distribute-patterns keeps gcc from turning rt.c's memset/memcpy loops into calls to
# themselves. rpt runs $RPT, or the workspace's rpt through cargo.
PPC_FLAGS="-mcpu=750 -O2 -mhard-float -ffreestanding -fno-builtin -nostdlib -fno-pie -no-pie -static -fno-pic \
  -mno-sdata -fno-asynchronous-unwind-tables -fno-tree-loop-distribute-patterns -Wall -Wextra \
  -Wl,--build-id=none -Wl,--no-warn-rwx-segments"

rpt() {
    if [ -n "${RPT:-}" ]; then
        "$RPT" "$@"
    else
        (cd "$here/../../.." && cargo run -q -p rpt-cli -- "$@")
    fi
}
