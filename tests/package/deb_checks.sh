# tests/package/check.sh, part 1 (sourced): the .deb installed into the
# fresh root with apt-get, and what it put there.

step "apt-get install ./$(basename "$deb") (with its Recommends)"
cp "$deb" "$root/tmp/"
in_root apt-get install -y -q "/tmp/$(basename "$deb")" </dev/null >"$work/install.log" 2>&1 ||
  fail "apt-get install failed: $(tail -n 15 "$work/install.log")"
[ "$(in_root dpkg-query -W -f '${Version}' emqd)" = "$version" ] || fail "emqd is not installed at $version"
in_root dpkg-query -W -f '${Status}' valkey-server | grep -q 'install ok installed' ||
  fail "valkey-server (Recommends) was not installed: $(grep -i valkey "$work/install.log" | tail -n 3)"
ok "emqd $version installed, valkey-server with it ($(in_root dpkg-query -W -f '${Version}' valkey-server))"
ok "Depends: $(dpkg-deb -f "$deb" Depends)"

# --- the files and their modes ----------------------------------------------
multiarch=$(in_root dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
want_mode() { # PATH MODE
  [ -e "$root$1" ] || fail "$1 is not installed"
  local got
  got=$(stat -c '%a %U:%G %F' "$root$1")
  [ "$got" = "$2 root:root regular file" ] || fail "$1 is '$got', want '$2 root:root regular file'"
}
want_mode /usr/bin/emqd 755
want_mode /usr/bin/emq 755
# Executable: valkey-server 8 refuses a module file without the bit.
want_mode /usr/lib/echomq/emq.so 755
for p in noop sha256; do want_mode "/usr/lib/$multiarch/echomq/plugins/libemq_$p.so" 644; done
for u in emqd.service emqd@.service; do want_mode "/lib/systemd/system/$u" 644; done
want_mode /etc/echomq/emqd.yaml 644
for d in copyright changelog.gz operations.md production.md emqd.example.yaml; do
  want_mode "/usr/share/doc/emqd/$d" 644
done
for m in emqd emq; do want_mode "/usr/share/man/man1/$m.1.gz" 644; done
# Every picture a page shows ships beside it, as it is (not compressed).
for png in $(grep -oh '([a-z0-9-]*\.png)' docs/*.md | tr -d '()' | sort -u); do
  want_mode "/usr/share/doc/emqd/$png" 644
  cmp -s "docs/$png" "$root/usr/share/doc/emqd/$png" || fail "/usr/share/doc/emqd/$png differs from docs/$png"
done
# Nothing of the package's writable by others, setuid or owned by a user.
odd=$(in_root dpkg-query -L emqd | while read -r f; do
  [ -e "$root$f" ] && [ ! -L "$root$f" ] && stat -c '%a %U:%G %n' "$root$f"
done | awk '$2 != "root:root" || $1 ~ /^[0-9]*[2367]$/ || length($1) > 3')
[ -z "$odd" ] || fail "files of the package with odd owners or modes: $odd"
ok "binaries, module, plugins, units, conffile, docs, manuals: where and as they should be"

for f in lua/*.lua; do
  cmp -s "$f" "$root/usr/share/echomq/$f" || fail "/usr/share/echomq/$f is missing or differs from the tree's $f"
done
extra=$(comm -13 <(cd lua && ls ./*.lua | sed 's#^\./##') <(ls "$root/usr/share/echomq/lua"))
[ -z "$extra" ] || fail "/usr/share/echomq/lua holds files lua/ does not: $extra"
ok "/usr/share/echomq/lua is lua/, byte for byte ($(ls lua/*.lua | wc -l) files)"

conffiles=$(in_root dpkg-query -W -f '${Conffiles}' emqd | awk 'NF { print $1 }')
[ "$conffiles" = /etc/echomq/emqd.yaml ] || fail "the conffiles are '$conffiles', want /etc/echomq/emqd.yaml"
ok "/etc/echomq/emqd.yaml is the package's one conffile"

# --- the units: verified, enabled, not started ------------------------------------
for u in emqd.service emqd@.service; do
  grep -qx 'ExecStart=/usr/bin/emqd .*' "$root/lib/systemd/system/$u" || fail "$u does not run /usr/bin/emqd"
done
# systemd-analyze reads the root's units, and the programs they name, as
# systemd on that host would; it says nothing about a sound unit.
ln -s emqd@.service "$root/lib/systemd/system/emqd@pkgtest.service"
for u in emqd.service emqd@pkgtest.service; do
  out=$(systemd-analyze verify --root="$root" "/lib/systemd/system/$u" 2>&1) ||
    fail "systemd-analyze verify $u: $out"
  [ -z "$out" ] || fail "systemd-analyze verify had something to say about the installed $u: $out"
done
rm "$root/lib/systemd/system/emqd@pkgtest.service"
ok "systemd-analyze verify: nothing to say about emqd.service and an instance of emqd@.service"
link=$root/etc/systemd/system/multi-user.target.wants/emqd.service
[ "$(readlink "$link")" = /lib/systemd/system/emqd.service ] || fail "emqd.service is not enabled (no $link)"
requests=$(systemd_requests)
if grep -Eq '(^| )(start|restart|try-restart|reload-or-restart)( |$)' <<<"$requests"; then
  fail "installing asked systemd to start something: $requests"
fi
grep -q 'daemon-reload' <<<"$requests" || fail "installing did not reload systemd (the postinst did not run its systemd part?): '$requests'"
ok "emqd.service enabled, not started (systemd was asked: $(tr '\n' ';' <<<"$requests"))"

# --- the programs -----------------------------------------------------------------
out=$(as_nobody emqd --version 2>&1) || fail "emqd --version: $out"
[[ "$out" == "emqd $version "* ]] || fail "emqd --version says '$out', want emqd $version"
ok "emqd --version: $out"
out=$(as_nobody emq --version 2>&1) || fail "emq --version: $out"
[[ "$out" == "emq $version "* ]] || fail "emq --version says '$out', want emq $version"
ok "emq --version: $out"
out=$(as_nobody emqd --check-config --config /etc/echomq/emqd.yaml 2>&1) ||
  fail "emqd --check-config on the shipped /etc/echomq/emqd.yaml: $out"
ok "emqd --check-config accepts the shipped /etc/echomq/emqd.yaml"
