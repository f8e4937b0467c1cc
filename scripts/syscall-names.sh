#!/bin/sh
# syscall-names.sh - writes lib/timeline/syscall-names-x86_64.h, the x86-64 system call
# numbers' names (raw_syscalls:sys_enter's id), from the kernel's UAPI header that
# Debian's linux-libc-dev installs. Run it again when a kernel adds system calls:
#   scripts/syscall-names.sh > lib/timeline/syscall-names-x86_64.h
set -eu
hdr=${1:-/usr/include/x86_64-linux-gnu/asm/unistd_64.h}
echo "/* syscall-names-x86_64.h - x86-64 system call names by number, written by"
echo " * scripts/syscall-names.sh from $(basename "$hdr") (linux-libc-dev); do not edit. */"
sed -n 's/^#define __NR_\([a-z0-9_]*\) \([0-9]*\)$/\2 \1/p' "$hdr" | sort -n |
	awk '{ printf "\t[%d] = \"%s\",\n", $1, $2 }'
