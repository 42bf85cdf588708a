#!/bin/sh
# check_layers.sh - fails when an #include "..." in src/, ui/ or main.c goes
# the wrong way across pytop's rooms (docs/architecture.md, "Rooms and the
# rules between them").  Output is TAP, one test per rule, so `make check`
# counts it; every wrong-way include is named with its file, line and rule.
#
# Usage: check_layers.sh [SRCDIR]   (default: $PYTOP_SRCDIR, else the
# directory above this script).
set -u

root=${1:-${PYTOP_SRCDIR:-$(dirname "$0")/..}}
cd "$root" || { echo "Bail out! cannot enter $root"; exit 1; }

# Named exceptions, "FILE INCLUDED", one per line, each with its reason.
EXCEPTIONS='
src/profile/code_table.h cpython/linetable.h
src/profile/native_syms.c target/target_files.h
src/profile/debug_package.c target/target_files.h
ui/source_file.c target/target_files.h
'
# src/profile/code_table.h: the line-table decoder is a pure function of
#   bytes already in a record; it reads nothing of the target.
# src/profile/native_syms.c: symbolization opens the target's ELF files on
#   disk (through /proc/PID/root and map_files, never its memory).
# src/profile/debug_package.c: the owner of a module without symbols, from
#   the target's dpkg database on disk, opened the same way.
# ui/source_file.c: the lines view opens a source file as the target sees
#   it, with the same safeguards.

COMMON='errors escape clock options hashmap sample_errors'

# room FILE: the room a path in the tree belongs to.
room() {
	case $1 in
	config.h) echo config ;;
	main.c) echo main ;;
	src/target/*) echo target ;;
	src/cpython/*) echo cpython ;;
	src/sampler/*) echo sampler ;;
	src/transport/*) echo transport ;;
	src/profile/*) echo profile ;;
	src/record/*) echo record ;;
	# The session level wires the rooms together: the live session and
	# the one-look dump.
	src/session.[ch]|src/dump.[ch]|src/dump_out.c|src/dump_native.[ch]) echo session ;;
	src/*/*) echo unknown ;;
	src/*)
		b=${1#src/}; b=${b%.[ch]}
		case " $COMMON " in *" $b "*) echo common ;; *) echo "top:$b" ;; esac ;;
	ui/*) echo ui ;;
	*) echo unknown ;;
	esac
}

# resolve FILE NAME: the tree path an include names, as the compiler finds
# it (the including file's directory, then -I src, then the top).
resolve() {
	d=$(dirname "$1")
	if [ "$2" = config.h ]; then echo config.h
	elif [ -f "$d/$2" ]; then echo "$d/$2"
	elif [ -f "src/$2" ]; then echo "src/$2"
	elif [ -f "$2" ]; then echo "$2"
	else echo "?"
	fi
}

# allowed FROMROOM FROMFILE TO TOROOM: empty if allowed, else the rule broken.
allowed() {
	fr=$1 file=$2 to=$3 tr=$4
	case $tr in config) return ;; esac
	case " $EXCEPTIONS " in *"$file $to"*) return ;; esac
	case $fr in
	main|session)
		case $tr in ui) [ "$fr" = main ] && return
			echo "src/ never includes ui/" ;; *) return ;; esac ;;
	common)
		[ "$tr" = common ] && return
		echo "common headers (${COMMON}) include nothing from the rooms" ;;
	top:*)
		[ "$tr" = common ] || [ "$tr" = "$fr" ] && return
		echo "top-level ${fr#top:} includes only common headers; only the session level (session, dump) and main.c see everything" ;;
	target)
		case $tr in common|target) return ;; esac
		echo "target/ includes only target/ and common headers (lower rooms never include higher ones)" ;;
	cpython)
		case $tr in common|target|cpython|transport) return ;; esac
		echo "cpython/ never includes sampler/, profile/, ui/ or the session (producer side, lower room)" ;;
	sampler)
		case $tr in common|target|cpython|transport|sampler) return ;; esac
		echo "sampler/ never includes profile/, ui/ or the session (the producer never sees the ring's consumers)" ;;
	transport)
		case $tr in common|transport) return ;; esac
		echo "transport/ includes only itself and common headers" ;;
	profile)
		case $tr in common|transport|profile) return ;; esac
		echo "profile/ includes only profile/, transport/ and common headers (after the ring, nothing reaches the target)" ;;
	record)
		case $tr in common|transport|profile|record) return ;; esac
		echo "record/ includes only record/, profile/, transport/ and common headers (a consumer after the ring: nothing reaches the target)" ;;
	ui)
		case $tr in ui) return ;; esac
		case $to in profile/snapshot.h|options.h) return ;; esac
		echo "ui/ includes only profile/snapshot.h, options.h and ui/" ;;
	*)
		echo "file outside every room: add its folder to tests/check_layers.sh and docs/architecture.md" ;;
	esac
}

failures=$(mktemp) || exit 1
trap 'rm -f "$failures"' EXIT
for f in $(find src ui -name '*.[ch]' | sort) main.c; do
	fr=$(room "$f")
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
	while IFS= read -r hit; do
		line=${hit%%:*}
		name=$(printf '%s\n' "$hit" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
		path=$(resolve "$f" "$name")
		if [ "$path" = "?" ]; then
			echo "$fr|$f:$line: includes \"$name\", found nowhere in the tree (rule: every include names a file of src/, ui/ or the build)"
			continue
		fi
		to=${path#src/}
		rule=$(allowed "$fr" "$f" "$to" "$(room "$path")")
		[ -n "$rule" ] && echo "$fr|$f:$line: includes \"$name\" ($path): $rule"
	done
done >"$failures"

# One function reads another process's memory (src/target/remote_mem.c,
# which counts its calls): no other file calls process_vm_readv, opens
# /proc/PID/mem, or lets libdw read it (dwfl_linux_proc_*).
for f in $(find src ui -name '*.[ch]' | sort) main.c; do
	[ "$f" = src/target/remote_mem.c ] && continue
	grep -nE 'process_vm_readv[[:space:]]*\(|/mem"|dwfl_linux_proc_[a-z_]+[[:space:]]*\(' "$f" |
	grep -vE '^[0-9]+:[[:space:]]*(\*|/\*|//)' |  # comments may name them
	while IFS= read -r hit; do
		echo "reads|$f:${hit%%:*}: reads another process's memory: only src/target/remote_mem.c does"
	done
done >>"$failures"

n=0
rooms='common top target cpython sampler transport profile record ui session main unknown reads'
set -- $rooms
echo "1..$#"
for r in $rooms; do
	n=$((n + 1))
	bad=$(grep -E "^$r(:[a-z_]+)?\|" "$failures" | sed 's/^[^|]*|//')
	what="includes from $r go the right way"
	[ "$r" = reads ] && what="only remote_mem.c reads another process's memory"
	if [ -z "$bad" ]; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		printf '%s\n' "$bad" | sed 's/^/# /'
	fi
done
! [ -s "$failures" ]
