#!/usr/bin/env bash
# fetch_pythons.sh - make Debian sid's CPython 3.13, 3.14 and 3.15 runnable on
# this Debian 12 machine, for pytop's tests, without touching the system's apt
# configuration.
#
#   scripts/fetch_pythons.sh [--refresh] [3.X ...]     (default: 3.13 3.14 3.15)
#
# The sid interpreters need glibc >= 2.38 (Debian 12 has 2.36), so the script
# fetches sid's libc6 and the libraries the interpreter and the stdlib modules
# the tests use link to, unpacks everything with `dpkg -x` into a private
# sysroot, and points each interpreter at that sysroot's own loader and
# library directories with patchelf.  The result is a plain ELF executable:
# no wrapper script, so an attached profiler sees the real interpreter PID.
# It finds its standard library by itself (CPython searches upwards from its
# own location for lib/python3.X/os.py), so it needs no PYTHONHOME either.
#
# Cache: $PYTOP_PYTHONS_DIR, default <repo>/build/pythons
#   apt/          private apt configuration, state, index files
#   debs/         the downloaded .debs (kept: a re-run needs no network)
#   root/         the .debs unpacked (a small sid sysroot); root/usr/bin/python3.X
#                 is the runnable, patched interpreter
#   pythons.txt   one line per ready interpreter: "3.14 /abs/path/python3.14"
#                 (a third field "ENV=NAME=value,..." would name environment
#                 an interpreter needs; none of these needs any)
#   pythons-shared.txt  the same for root/usr/bin/python3.X-shared: the same
#                 version as a PIE linked to libpython3.X.so.1.0 (sid's
#                 python3.X is static and not PIE; see prepare_shared)
#
# apt runs as its ordinary client with a private sources list (sid, main,
# on the same Debian mirror the system's sources use; deb.debian.org when
# none is found; $PYTOP_DEBIAN_MIRROR overrides), private state, cache and
# list directories, and the system's apt.conf.d for everything else (a
# proxy set there still applies).
#
# Downloads happen only when a needed .deb is missing from the cache, or
# with --refresh (which fetches sid's current versions).  A re-run with
# everything in place only re-checks the interpreters (well under a second).
#
# Prints one line per interpreter: "python3.X: ready (<sys.version>)" or
# "python3.X: not available (<reason>)", and the same for python3.X-shared.
# Exit status 0 even when versions are unavailable (the tests report those);
# non-zero only on a bug in this script.
set -Eeuo pipefail
trap 'printf "fetch_pythons.sh: unexpected failure at line %s\n" "$LINENO" >&2' ERR

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${PYTOP_PYTHONS_DIR:-$ROOT/build/pythons}
DEFAULT_VERSIONS=(3.13 3.14 3.15)
ARCH=amd64
TRIPLET=x86_64-linux-gnu

# sid's libraries that the interpreters (libz, libexpat, libzstd, libgcc_s)
# and the stdlib modules the tests use (_hashlib -> libcrypto) link to.  With
# Debian 12's own copies, _hashlib fails (libcrypto lacks OPENSSL_3.4.0) and
# hashlib silently falls back to its built-in code; libzstd (1.5.4 < 1.5.5)
# is too old for 3.15.  The rest (_ctypes, _lzma, _bz2, _uuid) are cheap
# and keep a test's import of them on sid's libraries too.  "a|b": the first
# name sid has.
LIB_PKGS=(libc6 zlib1g libexpat1 libzstd1 libgcc-s1 "libssl3t64|libssl3"
          libffi8 liblzma5 libbz2-1.0 libuuid1)

APT_DIR=$CACHE/apt
DEB_DIR=$CACHE/debs
SYSROOT=$CACHE/root
LIST=$CACHE/pythons.txt
SHARED_LIST=$CACHE/pythons-shared.txt

REFRESH=0
VERSIONS=()

say() { printf '%s\n' "$*"; }
note() { printf 'fetch_pythons: %s\n' "$*" >&2; }
usage() {
	echo "usage: scripts/fetch_pythons.sh [--refresh] [3.X ...]" >&2
	exit 2
}

parse_args() {
	local a
	for a in "$@"; do
		case $a in
		--refresh) REFRESH=1 ;;
		3.[0-9]|3.[0-9][0-9]) VERSIONS+=("$a") ;;
		*) usage ;;
		esac
	done
	[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=("${DEFAULT_VERSIONS[@]}")
}

# Per-version outcome: REASON[X] is empty once the interpreter is ready.
declare -A REASON=()
declare -A READY_LINE=()

all_unavailable() {
	local v key
	for v in "${VERSIONS[@]}"; do
		for key in "$v" "$v-shared"; do
			[ -n "${REASON[$key]:-}" ] || REASON[$key]=$1
		done
	done
}

# ---- tools ------------------------------------------------------------

# need_tool TOOL PACKAGE: install PACKAGE with the system's apt when TOOL is
# missing (root only).  Returns 1 when the tool stays missing.
need_tool() {
	local tool=$1 pkg=$2 log
	command -v "$tool" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" -ne 0 ]; then
		note "$tool is missing: apt-get install $pkg (as root)"
		return 1
	fi
	note "installing $pkg (for $tool)"
	log=$(mktemp /tmp/pytop-apt.XXXXXX)
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	         --no-install-recommends "$pkg" >"$log" 2>&1; then
		# A fresh machine may have no package lists yet.
		DEBIAN_FRONTEND=noninteractive apt-get update -q >>"$log" 2>&1 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends "$pkg" >>"$log" 2>&1 || true
	fi
	if ! command -v "$tool" >/dev/null 2>&1; then
		tail -n 5 "$log" >&2
		note "could not install $pkg (log: $log)"
		return 1
	fi
	rm -f "$log"
}

check_tools() {
	if [ "$(dpkg --print-architecture 2>/dev/null)" != "$ARCH" ]; then
		all_unavailable "only set up for $ARCH machines"
		return 1
	fi
	local t
	for t in apt-get apt-cache dpkg-deb; do
		command -v "$t" >/dev/null 2>&1 && continue
		all_unavailable "$t is missing"
		return 1
	done
	need_tool patchelf patchelf || { all_unavailable "patchelf is missing"; return 1; }
	if ! need_tool nm binutils || ! need_tool readelf binutils; then
		all_unavailable "nm/readelf (binutils) are missing"
		return 1
	fi
}

# ---- private apt ------------------------------------------------------

# system_mirror: print the first Debian archive URI (".../debian") that the
# system's own sources use, in apt's reading order; nothing when none.
system_mirror() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		# deb [options] URI suite components
		sed -n -E 's/^[[:space:]]*deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+).*/\2/p' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		# deb822 stanzas: the URIs of enabled stanzas whose Types has deb.
		# (mawk: no IGNORECASE; field names are case-insensitive.)
		awk 'function flush() { if (deb && enabled) printf "%s", uris
		                        deb = 0; enabled = 1; uris = "" }
		     BEGIN { enabled = 1 }
		     /^[[:space:]]*$/ { flush(); next }
		     /^#/ { next }
		     { f = tolower($1) }
		     f == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
		     f == "enabled:" { if (tolower($2) == "no") enabled = 0 }
		     f == "uris:" { for (i = 2; i <= NF; i++) uris = uris $i "\n" }
		     END { flush() }' "$f"
	done
} 2>/dev/null

pick_mirror() {
	local uri
	if [ -n "${PYTOP_DEBIAN_MIRROR:-}" ]; then
		printf '%s\n' "${PYTOP_DEBIAN_MIRROR%/}"
		return
	fi
	# The main archive only: not -security, -ports, -debug or a snapshot.
	uri=$(system_mirror | grep -m1 -E '^https?://[^/[:space:]]+(/[^[:space:]]*)?/debian/?$' || true)
	printf '%s\n' "${uri:-http://deb.debian.org/debian}"
}

# write_apt_config KEYRING: the private sources list and configuration.
write_apt_config() {
	local keyring=$1 mirror
	mirror=$(pick_mirror)
	mkdir -p "$APT_DIR/state/lists/partial" "$APT_DIR/cache/archives/partial"
	: >>"$APT_DIR/state/status"
	# target=Packages: no Contents/DEP-11/translation indexes even when
	# apt-file or appstream configuration asks for them.
	printf 'deb [signed-by=%s target=Packages] %s sid main\n' \
		"$keyring" "$mirror" >"$APT_DIR/sources.list"
	# Read after the system's apt.conf.d (through Dir::Etc::main), so it can
	# drop the system's post-update hooks: they refresh the system's own
	# AppStream/PackageKit caches, which our private update does not change.
	{
		[ -r /etc/apt/apt.conf ] && printf '#include "/etc/apt/apt.conf";\n'
		printf '#clear APT::Update::Pre-Invoke;\n'
		printf '#clear APT::Update::Post-Invoke;\n'
		printf '#clear APT::Update::Post-Invoke-Success;\n'
		printf '#clear APT::Architectures;\n'
		printf 'APT::Architectures { "%s"; };\n' "$ARCH"
		printf 'Acquire::Languages "none";\n'
		# No binary package caches: they would double the cache's size.
		printf 'Dir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\n'
	} >"$APT_DIR/main.conf"
	printf 'Dir::Etc::main "%s";\n' "$APT_DIR/main.conf" >"$APT_DIR/apt.conf"
}

# papt apt-get|apt-cache ARGS...: run apt with the private configuration.
# sid's Release file is valid for a week only; a mirror or archive snapshot
# that lags behind (as the one a fresh machine here reaches does) has an
# expired one, which apt refuses by default.  The signature is still
# checked; only the expiry date is not, for these test interpreters.
papt() {
	local tool=$1; shift
	local sandbox=()
	# The _apt sandbox user cannot write into a root-owned private cache.
	[ "$(id -u)" -eq 0 ] && sandbox=(-o APT::Sandbox::User=root)
	APT_CONFIG=$APT_DIR/apt.conf "$tool" -q \
		-o Dir::Etc::SourceList="$APT_DIR/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null \
		-o Dir::Etc::Preferences=/dev/null \
		-o Dir::Etc::PreferencesParts=/dev/null \
		-o Dir::State="$APT_DIR/state" \
		-o Dir::State::status="$APT_DIR/state/status" \
		-o Dir::Cache="$APT_DIR/cache" \
		-o Debug::NoLocking=1 \
		-o APT::Architecture="$ARCH" \
		-o Acquire::Check-Valid-Until=false \
		"${sandbox[@]}" "$@"
}

# The archive key: Debian 12's keyring verifies sid's Release file as long as
# sid is signed with keys that Debian 12's debian-archive-keyring carries
# (bookworm point releases add the keys of later releases).  If it does not,
# the fallback is the newest debian-archive-keyring the system's own,
# already-trusted sources offer, downloaded with the system's apt and
# unpacked here.  A keyring downloaded from sid itself could not be
# verified, and [trusted=yes] would run unverified code, so neither is used:
# the versions are then reported as not available.
KEYRING_SYSTEM=/usr/share/keyrings/debian-archive-keyring.gpg

fallback_keyring() {
	local dir=$APT_DIR/keyring deb k sandbox=()
	rm -rf "$dir"
	mkdir -p "$dir/deb"
	[ "$(id -u)" -eq 0 ] && sandbox=(-o APT::Sandbox::User=root)
	(cd "$dir/deb" && apt-get -q "${sandbox[@]}" download debian-archive-keyring) >&2 ||
		return 1
	for deb in "$dir"/deb/debian-archive-keyring_*.deb; do break; done
	[ -f "$deb" ] || return 1
	dpkg-deb -x "$deb" "$dir/root"
	for k in "$dir"/root/usr/share/keyrings/debian-archive-keyring.gpg \
	         "$dir"/root/usr/share/keyrings/debian-archive-keyring.pgp; do
		[ -f "$k" ] && { printf '%s\n' "$k"; return 0; }
	done
	return 1
}

# apt_update: fetch sid's index.  On failure, returns 1 with FETCH_ERROR set;
# whatever the cache already holds is still used.
FETCH_ERROR=
apt_update() {
	local log=$APT_DIR/update.log keyring
	write_apt_config "$KEYRING_SYSTEM"
	note "updating the private sid index ($(awk '{print $4}' "$APT_DIR/sources.list"))"
	if papt apt-get update >"$log" 2>&1 && ! grep -q '^[WE]:' "$log"; then
		return 0
	fi
	if grep -q -E 'NO_PUBKEY|EXPKEYSIG|KEYEXPIRED|not signed|GPG error' "$log"; then
		note "Debian 12's keyring does not verify sid; trying the newest debian-archive-keyring"
		if keyring=$(fallback_keyring); then
			write_apt_config "$keyring"
			if papt apt-get update >"$log" 2>&1 && ! grep -q '^[WE]:' "$log"; then
				return 0
			fi
		fi
		tail -n 5 "$log" >&2
		FETCH_ERROR="sid's Release file could not be verified with Debian's archive keyring"
		return 1
	fi
	tail -n 5 "$log" >&2
	FETCH_ERROR="apt-get update of sid failed (log: ${log#"$ROOT"/})"
	return 1
}

# ---- package sets -----------------------------------------------------

# cached_deb NAME: the cached .deb of package NAME, if any.
cached_deb() {
	local f
	for f in "$DEB_DIR/$1"_*_"$ARCH".deb "$DEB_DIR/$1"_*_all.deb; do
		[ -f "$f" ] && { printf '%s\n' "$f"; return 0; }
	done
	return 1
}

# cached_alt "a|b": the cached .deb of the first alternative that has one.
cached_alt() {
	local alt
	local -a alts
	IFS='|' read -r -a alts <<<"$1"
	for alt in "${alts[@]}"; do
		cached_deb "$alt" && return 0
	done
	return 1
}

# python_pkgs VERSION: the packages of one version.  libpython3.X (the
# shared library) only serves the python3.X-shared variant.
python_pkgs() {
	printf '%s\n' "python$1-minimal" "libpython$1-minimal" "libpython$1-stdlib" \
		"libpython$1"
}

# Packages sid did not have when its index was last read, one per line, so
# that a re-run does not fetch the index again just to learn that.
ABSENT_FILE=
absent() { grep -q -x -F -- "$1" "$ABSENT_FILE" 2>/dev/null; }

# cached_or_absent "a|b": a cached .deb, or sid has none of the names.
cached_or_absent() {
	local alt
	local -a alts
	cached_alt "$1" >/dev/null && return 0
	IFS='|' read -r -a alts <<<"$1"
	for alt in "${alts[@]}"; do
		absent "$alt" || return 1
	done
}

# Candidates from the private index: CANDIDATE[name]=version.
declare -A CANDIDATE=()
read_candidates() {
	local names=("$@") name ver
	CANDIDATE=()
	while read -r name ver; do
		[ "$ver" = "(none)" ] || CANDIDATE[$name]=$ver
	done < <(papt apt-cache policy "${names[@]}" 2>/dev/null |
	         awk '/^[^ ].*:$/ { sub(/:$/, ""); n = $0 }
	              /^  Candidate:/ { print n, $2 }')
}

# download NAME...: download sid's candidate of each NAME into the cache,
# then drop older cached versions of the same packages.
download() {
	local name want=() f
	for name in "$@"; do
		want+=("$name=${CANDIDATE[$name]}")
	done
	[ ${#want[@]} -gt 0 ] || return 0
	note "downloading ${*}"
	mkdir -p "$DEB_DIR/new"
	if ! (cd "$DEB_DIR/new" && papt apt-get download "${want[@]}") \
	       >"$APT_DIR/download.log" 2>&1; then
		tail -n 5 "$APT_DIR/download.log" >&2
		FETCH_ERROR="download failed (log: $APT_DIR/download.log)"
	fi
	for name in "$@"; do
		for f in "$DEB_DIR/new/$name"_*.deb; do
			[ -f "$f" ] || continue
			rm -f "$DEB_DIR/$name"_*.deb
			mv "$f" "$DEB_DIR/"
		done
	done
	rm -rf "$DEB_DIR/new"
}

# want_pkg NAME: true when NAME's candidate is not the cached .deb.
want_pkg() {
	local f
	f=$(cached_deb "$1") || return 0
	[ "$(dpkg-deb -f "$f" Version)" != "${CANDIDATE[$1]}" ]
}

# fetch: make sure debs/ holds every package the requested versions need.
# Without --refresh, apt runs only when something is missing.
fetch() {
	local v p alt need_index=0 names=() missing=()
	local -a alts
	mkdir -p "$DEB_DIR"
	for v in "${VERSIONS[@]}"; do
		mapfile -t -O ${#names[@]} names < <(python_pkgs "$v")
	done
	names+=("${LIB_PKGS[@]}")
	for p in "${names[@]}"; do
		cached_or_absent "$p" || need_index=1
	done
	[ "$need_index" -eq 1 ] || [ "$REFRESH" -eq 1 ] || return 0

	apt_update || return 0
	names=()
	for v in "${VERSIONS[@]}"; do
		mapfile -t -O ${#names[@]} names < <(python_pkgs "$v")
	done
	for p in "${LIB_PKGS[@]}"; do
		IFS='|' read -r -a alts <<<"$p"
		names+=("${alts[@]}")
	done
	read_candidates "${names[@]}"
	{
		# What earlier runs learnt about other packages stays.
		[ -f "$ABSENT_FILE" ] &&
			grep -v -x -F -f <(printf '%s\n' "${names[@]}") "$ABSENT_FILE"
		for p in "${names[@]}"; do
			[ -n "${CANDIDATE[$p]:-}" ] || printf '%s\n' "$p"
		done
	} >"$ABSENT_FILE.tmp" || true
	mv -f "$ABSENT_FILE.tmp" "$ABSENT_FILE"

	for v in "${VERSIONS[@]}"; do
		while read -r p; do
			[ -n "${CANDIDATE[$p]:-}" ] || continue
			if want_pkg "$p"; then missing+=("$p"); fi
		done < <(python_pkgs "$v")
	done
	for p in "${LIB_PKGS[@]}"; do
		IFS='|' read -r -a alts <<<"$p"
		for alt in "${alts[@]}"; do
			[ -n "${CANDIDATE[$alt]:-}" ] || continue
			if want_pkg "$alt"; then missing+=("$alt"); fi
			continue 2
		done
		cached_alt "$p" >/dev/null || note "sid has none of: ${p//|/, }"
	done
	download "${missing[@]}"
}

# ---- sysroot ----------------------------------------------------------

# The .debs that make up the sysroot, one path per line, sorted.
sysroot_debs() {
	local v p
	for v in "${VERSIONS[@]}"; do
		while read -r p; do
			cached_deb "$p" || true
		done < <(python_pkgs "$v")
	done
	for p in "${LIB_PKGS[@]}"; do
		cached_alt "$p" || true
	done
} 2>/dev/null

# unpack: (re)build root/ when the set of .debs changed.  The manifest is
# written last, so an interrupted unpack is redone on the next run.
unpack() {
	local manifest=$SYSROOT/.debs want deb
	want=$(sysroot_debs | xargs -r -n1 basename | sort -u)
	# Versions are unpacked side by side; a run for fewer versions keeps
	# what an earlier run unpacked.
	if [ -f "$manifest" ] &&
	   [ -z "$(comm -23 <(printf '%s\n' "$want") <(sort "$manifest"))" ]; then
		return 0
	fi
	note "unpacking into ${SYSROOT#"$ROOT"/}"
	rm -rf "$SYSROOT"
	mkdir -p "$SYSROOT"
	while IFS= read -r deb; do
		[ -n "$deb" ] && dpkg-deb -x "$DEB_DIR/$deb" "$SYSROOT"
	done <<<"$want"
	printf '%s\n' "$want" >"$manifest"
}

# The sysroot's own loader, through no symlink (PT_INTERP is used verbatim).
loader() {
	local l
	for l in "$SYSROOT/usr/lib/$TRIPLET/ld-linux-x86-64.so.2" \
	         "$SYSROOT/lib/$TRIPLET/ld-linux-x86-64.so.2" \
	         "$SYSROOT/usr/lib64/ld-linux-x86-64.so.2" \
	         "$SYSROOT/lib64/ld-linux-x86-64.so.2"; do
		[ -e "$l" ] && { readlink -f "$l"; return 0; }
	done
	return 1
}

library_path() {
	local d out=
	for d in "$SYSROOT/usr/lib/$TRIPLET" "$SYSROOT/lib/$TRIPLET"; do
		[ -d "$d" ] && out=${out:+$out:}$d
	done
	printf '%s\n' "$out"
}

# patch BINARY LOADER RPATH: point BINARY at the sysroot, in place (through a
# copy, so an interrupted run never leaves a half-written interpreter).
# DT_RPATH, not DT_RUNPATH: a RUNPATH only serves the executable's own
# dependencies, while extension modules' dependencies (libcrypto for
# _hashlib) would then come from the system's older libraries.  DT_RPATH
# also takes precedence over a test's LD_LIBRARY_PATH.
patch() {
	local bin=$1 ld=$2 rpath=$3
	if [ "$(patchelf --print-interpreter "$bin" 2>/dev/null)" = "$ld" ] &&
	   readelf -d "$bin" | grep -q -F "(RPATH)              Library rpath: [$rpath]"; then
		return 0
	fi
	cp -p "$bin" "$bin.tmp"
	patchelf --set-interpreter "$ld" --force-rpath --set-rpath "$rpath" "$bin.tmp"
	mv -f "$bin.tmp" "$bin"
}

# ---- checks -----------------------------------------------------------

# What a test workload needs: threads, hashing through OpenSSL (_hashlib;
# plain hashlib would silently fall back to built-in code), zlib and json,
# and the standard library found inside the sysroot, not in the system's /usr.
CHECK_PY='import sys, threading, hashlib, zlib, json, _hashlib
prefix = sys.argv[1]
if sys.prefix != prefix:
    sys.exit("standard library from %s, not %s" % (sys.prefix, prefix))
print("OK", hashlib.sha256(b"x").hexdigest()[:8], sys.version.replace("\n", " "), flush=True)
sys.stdin.read()'

# symbol_object BINARY: the object that defines _PyRuntime: the binary
# itself (static build) or the libpython it needs.
symbol_object() {
	local bin=$1 lib
	lib=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(libpython[^]]*\)\].*/\1/p' | head -n 1)
	if [ -n "$lib" ]; then
		printf '%s\n' "$SYSROOT/usr/lib/$TRIPLET/$lib"
	else
		printf '%s\n' "$bin"
	fi
}

# first_load_vaddr OBJECT: the page-aligned address of the first PT_LOAD.
first_load_vaddr() {
	readelf -l -W "$1" | awk '$1 == "LOAD" { print $3; exit }'
}

# read_mem PID ADDRESS COUNT: COUNT bytes of PID's memory, printable.
read_mem() {
	dd if="/proc/$1/mem" bs="$3" count=1 skip="$2" iflag=skip_bytes 2>/dev/null |
		LC_ALL=C tr -c '[:print:]' '.'
}

# read_cookie PID OBJECT SYMVALUE: the 8 bytes at _PyRuntime in a running
# process: the _Py_DebugOffsets cookie ("xdebugpy") on 3.13 and later.
# Prints "unreadable" when the process's memory cannot be read at all (no
# ptrace permission), as opposed to reading something else at _PyRuntime.
read_cookie() {
	local pid=$1 obj=$2 value=$3 start vaddr
	start=$(awk -v f="$(readlink -f "$obj")" '$6 == f && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' \
	        "/proc/$pid/maps")
	[ -n "$start" ] || return 0
	if [ "$(read_mem "$pid" $((0x$start)) 4)" != .ELF ]; then
		echo unreadable
		return 0
	fi
	vaddr=$(first_load_vaddr "$obj")
	read_mem "$pid" $(( 0x$start - (vaddr & ~0xfff) + 0x$value )) 8
}

# foreign_libs PID: shared objects mapped by PID from outside the sysroot.
foreign_libs() {
	awk '$6 ~ /\.so/ { print $6 }' "/proc/$1/maps" | sort -u |
		grep -v -F "$SYSROOT/" || true
}

# verify KEY BINARY: run it, check the imports, that its _PyRuntime and
# Py_Version are exported, and that a running process of it shows the
# debug-offsets cookie at _PyRuntime.  Sets READY_LINE[KEY] or REASON[KEY].
verify() {
	local v=$1 bin=$2 tmp out pid obj syms value cookie='' line foreign='' hold rd
	obj=$(symbol_object "$bin")
	syms=$(nm -D --defined-only "$obj" 2>/dev/null || true)
	if ! grep -q ' _PyRuntime$' <<<"$syms" || ! grep -q ' Py_Version$' <<<"$syms"; then
		REASON[$v]="_PyRuntime or Py_Version not exported by ${obj##*/}"
		return
	fi
	value=$(awk '$3 == "_PyRuntime" { print $1; exit }' <<<"$syms")

	tmp=$(mktemp -d /tmp/pytop-fetch.XXXXXX)
	# Two FIFOs: its first output line arrives without polling, and it
	# stays alive (for the memory read) until its stdin is closed.
	mkfifo "$tmp/in" "$tmp/out"
	"$bin" -I -c "$CHECK_PY" "$SYSROOT/usr" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	exec {hold}>"$tmp/in" {rd}<"$tmp/out"
	out=
	read -r -t 20 -u "$rd" out || true
	if [ "${out%% *}" = OK ]; then
		cookie=$(read_cookie "$pid" "$obj" "$value")
		foreign=$(foreign_libs "$pid")
	else
		kill "$pid" 2>/dev/null || true   # it may hang instead of failing
	fi
	exec {hold}>&- {rd}<&-
	wait "$pid" 2>/dev/null || true

	if [ "${out%% *}" != OK ]; then
		line=$(grep -v '^[[:space:]]*$' "$tmp/err" | tail -n 1)
		REASON[$v]="${bin##*/} does not run: ${line:-no output}"
	elif [ "$(cut -d' ' -f2 <<<"$out")" != 2d711642 ]; then
		REASON[$v]="sha256 gave a wrong digest"
	elif [ "$cookie" != xdebugpy ] && [ "$cookie" != unreadable ]; then
		REASON[$v]="no _Py_DebugOffsets cookie at _PyRuntime in a running process (read '${cookie}')"
	else
		READY_LINE[$v]=$(cut -d' ' -f3- <<<"$out")
		REASON[$v]=
		[ "$cookie" = xdebugpy ] ||
			note "${bin##*/}: cannot read a child's memory here (ptrace restricted?); _PyRuntime not checked live"
		[ -z "$foreign" ] ||
			note "${bin##*/} also maps system libraries: $(tr '\n' ' ' <<<"$foreign")"
	fi
	rm -rf "$tmp"
}

# ---- the variants -----------------------------------------------------

# missing_reason PACKAGE: why PACKAGE's files are not in the sysroot.
missing_reason() {
	if absent "$1"; then
		printf 'sid has no %s\n' "$1"
	else
		printf '%s\n' "${FETCH_ERROR:-$1 is not in the cache}"
	fi
}

# prepare_static VERSION: Debian's own interpreter, python3.X-minimal's
# /usr/bin/python3.X (statically linked with libpython).
prepare_static() {
	local v=$1 ld=$2 rpath=$3 bin=$SYSROOT/usr/bin/python$1
	if [ ! -f "$bin" ]; then
		REASON[$v]=$(missing_reason "python$v-minimal")
	elif [ ! -f "$SYSROOT/usr/lib/python$v/os.py" ]; then
		REASON[$v]=$(missing_reason "libpython$v-minimal")
	else
		patch "$bin" "$ld" "$rpath"
		verify "$v" "$bin"
	fi
}

# The shared-libpython variant: CPython's own Programs/python.c (a main that
# calls Py_BytesMain) linked as a PIE against sid's libpython3.X.so.1.0 --
# what a --enable-shared build installs as its python3.X.  sid ships no such
# executable, and its python3.X is not PIE, so this is the only way to run
# 3.14 and later from a shared libpython here.  --allow-shlib-undefined:
# libpython needs glibc 2.38+ symbols that only the sysroot's libc has.
PYMAIN_C='extern int Py_BytesMain(int argc, char **argv);
int main(int argc, char **argv) { return Py_BytesMain(argc, argv); }'

prepare_shared() {
	local v=$1 ld=$2 rpath=$3 key=$1-shared bin=$SYSROOT/usr/bin/python$1-shared
	local lib=$SYSROOT/usr/lib/$TRIPLET/libpython$1.so.1.0 log
	if [ -n "${REASON[$v]:-}" ]; then
		REASON[$key]=${REASON[$v]}
		return
	fi
	if [ ! -f "$lib" ]; then
		REASON[$key]=$(missing_reason "libpython$v")
		return
	fi
	if [ ! -f "$bin" ]; then
		if ! command -v cc >/dev/null 2>&1; then
			REASON[$key]="no C compiler (cc) to link its main"
			return
		fi
		log=$SYSROOT/python$v-shared.log
		if ! printf '%s\n' "$PYMAIN_C" |
		     cc -O2 -fPIE -pie -x c - -x none "$lib" -Wl,--allow-shlib-undefined \
		        -o "$bin.tmp" >"$log" 2>&1; then
			REASON[$key]="linking its main failed: $(head -n 1 "$log")"
			return
		fi
		mv -f "$bin.tmp" "$bin"
	fi
	patch "$bin" "$ld" "$rpath"
	verify "$key" "$bin"
}

prepare_all() {
	local v ld rpath
	check_tools || return 0
	fetch
	unpack
	if ! ld=$(loader); then
		all_unavailable "$(missing_reason libc6)"
		return 0
	fi
	rpath=$(library_path)
	for v in "${VERSIONS[@]}"; do
		prepare_static "$v" "$ld" "$rpath"
		prepare_shared "$v" "$ld" "$rpath"
	done
}

# keep_others LIST: the lines of LIST for versions this run did not handle
# (a run for one version keeps the others listed).
keep_others() {
	local ver path rest v
	[ -f "$1" ] || return 0
	while read -r ver path rest; do
		for v in "${VERSIONS[@]}"; do
			[ "$v" = "$ver" ] && continue 2
		done
		[ -x "$path" ] && printf '%s %s%s\n' "$ver" "$path" "${rest:+ $rest}"
	done <"$1"
	return 0
}

# report: the list files, and one line per interpreter.
report() {
	local v key list
	keep_others "$LIST" >"$LIST.tmp"
	keep_others "$SHARED_LIST" >"$SHARED_LIST.tmp"
	for v in "${VERSIONS[@]}"; do
		for key in "$v" "$v-shared"; do
			list=$LIST
			[ "$key" = "$v" ] || list=$SHARED_LIST
			if [ -n "${READY_LINE[$key]:-}" ]; then
				printf '%s %s\n' "$v" "$SYSROOT/usr/bin/python$key" >>"$list.tmp"
				say "python$key: ready (${READY_LINE[$key]})"
			else
				say "python$key: not available (${REASON[$key]:-not prepared})"
			fi
		done
	done
	mv -f "$LIST.tmp" "$LIST"
	mv -f "$SHARED_LIST.tmp" "$SHARED_LIST"
}

main() {
	parse_args "$@"
	mkdir -p "$CACHE"
	CACHE=$(cd "$CACHE" && pwd)
	APT_DIR=$CACHE/apt DEB_DIR=$CACHE/debs SYSROOT=$CACHE/root
	LIST=$CACHE/pythons.txt SHARED_LIST=$CACHE/pythons-shared.txt
	ABSENT_FILE=$DEB_DIR/absent-in-sid
	# One run at a time per cache (quickstart and a manual run, say).
	exec 9>"$CACHE/.lock"
	flock 9
	prepare_all
	report
}

main "$@"
